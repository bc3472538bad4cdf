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
//! In USD (the bill `recommend` ranks by) the call is priced at the rates of the request's model:
//! its cache read and write rates, and its output rate for the summary. [`CompactionTotals`] are
//! the per-run counts every output carries. Pure: no I/O.

use serde::{Deserialize, Serialize};

use super::cost::{CacheModel, Prices, UsdRates};
use crate::model::Tokens;
pub use crate::result::CompactionTotals;
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

/// The summarisation call's input tokens read from the cache and written: its cached prefix is
/// read unless the cache expired since the previous request.
fn read_and_written(row: &RequestRow, model: &CacheModel) -> (Tokens, Tokens) {
    let expired = matches!((model.ttl_ms, row.gap_ms), (Some(ttl), Some(gap)) if gap > ttl);
    let read = if expired { 0 } else { row.summarization_cached_tokens.min(row.summarization_input_tokens) };
    (read, row.summarization_input_tokens - read)
}

/// One compaction's summarisation call, priced: what `compare` and `cost` list per event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CompactionEvent {
    /// The request the compaction came before (index in its conversation).
    pub request: usize,
    /// The call's input: the context then, plus the summarisation instructions.
    pub input_tokens: Tokens,
    /// Of that input, the prefix read from the cache (0 when it expired or is not used).
    pub read_tokens: Tokens,
    /// Its output: the summary, at the output price.
    pub output_tokens: Tokens,
    /// The call's cost, in the prices' unit.
    pub cost: f64,
    /// The call's cost in USD, at the rates of the request's model.
    pub cost_usd: f64,
}

/// Every summarisation call of a run's `rows`, priced.
pub fn events(rows: &[RequestRow], model: &CacheModel) -> Vec<CompactionEvent> {
    rows.iter()
        .filter(|r| r.summarization_input_tokens > 0)
        .map(|r| {
            let usd = UsdRates::of(model, r.model.as_deref()).0;
            CompactionEvent {
                request: r.request,
                input_tokens: r.summarization_input_tokens,
                read_tokens: read_and_written(r, model).0,
                output_tokens: r.summarization_output_tokens,
                cost: summarization_cost(r, model),
                cost_usd: summarization_cost_usd(r, model, &usd),
            }
        })
        .collect()
}

/// The cost of the summarisation call made before `row`'s request (0 without one).
pub fn summarization_cost(row: &RequestRow, model: &CacheModel) -> f64 {
    if row.summarization_input_tokens == 0 {
        return 0.0;
    }
    let (read, written) = read_and_written(row, model);
    let p = &model.prices;
    p.cost(read, written) + row.summarization_output_tokens as f64 * output_price(p) / p.per_tokens
}

/// The same call in USD at `usd`, the rates of the request's model (the long-context tier's when
/// the call's input is over its bound): what `recommend` ranks by (0 without one).
pub fn summarization_cost_usd(row: &RequestRow, model: &CacheModel, usd: &UsdRates) -> f64 {
    if row.summarization_input_tokens == 0 {
        return 0.0;
    }
    let (read, written) = read_and_written(row, model);
    let usd = usd.for_prompt(row.summarization_input_tokens);
    read as f64 * usd.read + written as f64 * usd.write + row.summarization_output_tokens as f64 * usd.output
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

    #[test]
    fn in_usd_the_call_pays_the_models_read_write_and_output_rates() {
        let model = CacheModel::default();
        let usd = UsdRates { read: 1.0, write: 10.0, output: 100.0, long: None };
        let cost = summarization_cost_usd(&compacted(100_000, 90_000, 3_000, Some(1_000)), &model, &usd);
        assert!((cost - (90_000.0 + 100_000.0 + 300_000.0)).abs() < 1e-6, "{cost}");
        let expired = summarization_cost_usd(&compacted(100_000, 90_000, 0, Some(600_000)), &model, &usd);
        assert!((expired - 1_000_000.0).abs() < 1e-6, "{expired}");
        assert_eq!(summarization_cost_usd(&RequestRow::default(), &model, &usd), 0.0);
    }

    #[test]
    fn each_summarisation_call_is_an_event_with_its_price() {
        let model = CacheModel::default();
        let rows = [
            RequestRow::default(),
            RequestRow { request: 1, ..compacted(100_000, 90_000, 3_000, Some(1_000)) },
        ];
        let e = events(&rows, &model);
        assert_eq!(e.len(), 1);
        assert_eq!(
            (e[0].request, e[0].input_tokens, e[0].read_tokens, e[0].output_tokens),
            (1, 100_000, 90_000, 3_000)
        );
        assert!((e[0].cost - summarization_cost(&rows[1], &model)).abs() < 1e-9);
        assert!(e[0].cost_usd > 0.0);
    }
}
