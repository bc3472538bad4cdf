//! The price of the summarisation calls compaction policies make (docs/compaction.md), added to a
//! request's cost by [`super::cost::cost_of_run`]: the call sends the context at that point (its
//! prefix, cached by the previous request, is read from the cache on a warm cache; the rest and
//! the summarisation instructions are written) and returns the summary, priced at the output
//! price. A call that opens with a prompt of its own shares no cached prefix: its row carries no
//! cached tokens, and all of its input is written (opencode's,
//! [`crate::policy::compact::CallCache::Written`]). A call the agent makes with prompt caching off
//! ([`RequestRow::summarization_uncached`]: OpenHands' condenser, Goose's compaction and
//! tool-pair calls) reads
//! nothing and writes nothing: its whole input is priced at the plain input price (the `input`
//! of [`Prices`] and of [`UsdRates`]; Anthropic's 1× where a 5-minute write is 1.25×). The
//! request after it then writes its whole new context (the replay gives it no previous context,
//! so the cost model counts it cold).
//!
//! Output is priced relative to uncached input by the providers' list prices: Anthropic's output
//! is 5× its input on every current model (Sonnet $3/$15, Opus $5/$25, Haiku $1/$5 per million,
//! platform.claude.com/docs/en/about-claude/pricing), OpenAI's GPT-5 8× ($1.25/$10,
//! developers.openai.com/api/docs/pricing); with no cache (`none`) every token is 1; with explicit
//! USD prices, which give no output price, output is taken at Anthropic's 5× the input price.
//! In USD (the bill `recommend` ranks by) the call is priced at the rates of the request's model:
//! its cache read and write rates (its input rate for a call with caching off), and its output
//! rate for the summary. [`CompactionTotals`] are
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

/// The summarisation call's input tokens read from the cache and written to it: its cached
/// prefix is read unless the cache expired since the previous request. A call made with caching
/// off is not asked: see [`uncached`].
fn read_and_written(row: &RequestRow, model: &CacheModel) -> (Tokens, Tokens) {
    let expired = matches!((model.ttl_ms, row.gap_ms), (Some(ttl), Some(gap)) if gap > ttl);
    let read = if expired { 0 } else { row.summarization_cached_tokens.min(row.summarization_input_tokens) };
    (read, row.summarization_input_tokens - read)
}

/// The input tokens of `row`'s summarisation call made with prompt caching off (none read, none
/// written: all at the plain input price), or `None` for a call that uses the cache.
fn uncached(row: &RequestRow) -> Option<Tokens> {
    row.summarization_uncached.then_some(row.summarization_input_tokens)
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
    /// The call was made with prompt caching off: its input is at the plain input price, none of
    /// it read or written (in the JSON only when true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncached: bool,
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
                read_tokens: if r.summarization_uncached { 0 } else { read_and_written(r, model).0 },
                uncached: r.summarization_uncached,
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
    let p = &model.prices;
    let input = match uncached(row) {
        Some(sent) => sent as f64 * p.input / p.per_tokens,
        None => {
            let (read, written) = read_and_written(row, model);
            p.cost(read, written)
        }
    };
    input + row.summarization_output_tokens as f64 * output_price(p) / p.per_tokens
}

/// The same call in USD at `usd`, the rates of the request's model (the long-context tier's when
/// the call's input is over its bound): what `recommend` ranks by (0 without one).
pub fn summarization_cost_usd(row: &RequestRow, model: &CacheModel, usd: &UsdRates) -> f64 {
    if row.summarization_input_tokens == 0 {
        return 0.0;
    }
    let usd = usd.for_prompt(row.summarization_input_tokens);
    let input = match uncached(row) {
        Some(sent) => sent as f64 * usd.input,
        None => {
            let (read, written) = read_and_written(row, model);
            read as f64 * usd.read + written as f64 * usd.write
        }
    };
    input + row.summarization_output_tokens as f64 * usd.output
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
        let usd = UsdRates { read: 1.0, write: 10.0, output: 100.0, input: 5.0, long: None };
        let cost = summarization_cost_usd(&compacted(100_000, 90_000, 3_000, Some(1_000)), &model, &usd);
        assert!((cost - (90_000.0 + 100_000.0 + 300_000.0)).abs() < 1e-6, "{cost}");
        let expired = summarization_cost_usd(&compacted(100_000, 90_000, 0, Some(600_000)), &model, &usd);
        assert!((expired - 1_000_000.0).abs() < 1e-6, "{expired}");
        assert_eq!(summarization_cost_usd(&RequestRow::default(), &model, &usd), 0.0);
    }

    fn uncached(input: u64, cached: u64, output: u64, gap_ms: Option<i64>) -> RequestRow {
        RequestRow { summarization_uncached: true, ..compacted(input, cached, output, gap_ms) }
    }

    #[test]
    fn a_call_with_caching_off_pays_the_input_price_for_all_of_its_input_and_reads_nothing() {
        let model = CacheModel::default();
        // Anthropic relative prices: input 1, write 1.25, read 0.1, output 5.
        let cached = summarization_cost(&compacted(100_000, 0, 3_000, Some(1_000)), &model);
        let off = summarization_cost(&uncached(100_000, 0, 3_000, Some(1_000)), &model);
        assert!((cached - (125_000.0 + 15_000.0)).abs() < 1e-6, "{cached}");
        assert!((off - (100_000.0 + 15_000.0)).abs() < 1e-6, "{off}");
        // A cached prefix the row might carry is not read: the call does not use the cache.
        let with_prefix = summarization_cost(&uncached(100_000, 90_000, 3_000, Some(1_000)), &model);
        assert_eq!(with_prefix, off);
        // The 1-hour cache's write price (2x) does not reach it either; nor does the TTL.
        let hour = CacheModel { prices: Prices::anthropic().for_ttl(None), ttl_ms: None };
        assert_eq!(summarization_cost(&uncached(100_000, 0, 3_000, None), &hour), off);
        // In USD per MTok the input price is the table's `input` (explicit prices: `input=`).
        let usd = CacheModel { prices: Prices::parse("input=3,write=3.75,read=0.3").unwrap(), ttl_ms: None };
        let off_usd = summarization_cost(&uncached(1_000_000, 0, 0, None), &usd);
        assert!((off_usd - 3.0).abs() < 1e-9, "{off_usd}");
        assert!((summarization_cost(&compacted(1_000_000, 0, 0, None), &usd) - 3.75).abs() < 1e-9);
    }

    #[test]
    fn a_call_that_shares_no_cached_prefix_writes_all_of_its_input_above_one_with_caching_off() {
        let model = CacheModel::default();
        // Written: nothing cached in the row, caching on (opencode's call).
        let written = compacted(100_000, 0, 3_000, Some(1_000));
        let (prefix, off) =
            (compacted(100_000, 90_000, 3_000, Some(1_000)), uncached(100_000, 0, 3_000, Some(1_000)));
        let cost = |r: &RequestRow| summarization_cost(r, &model);
        assert!((cost(&written) - (1.25 * 100_000.0 + 5.0 * 3_000.0)).abs() < 1e-6, "{}", cost(&written));
        assert!(cost(&prefix) < cost(&off) && cost(&off) < cost(&written));
        let e = events(std::slice::from_ref(&written), &model);
        assert_eq!((e[0].read_tokens, e[0].uncached), (0, false));
        // In USD at the Sonnet 4.5 row: $3.75 a million written.
        let usd = UsdRates::of(&model, Some("claude-sonnet-4-5")).0;
        let got = summarization_cost_usd(&written, &model, &usd);
        assert!((got - (100_000.0 * 3.75e-6 + 3_000.0 * usd.output)).abs() < 1e-12, "{got}");
    }

    #[test]
    fn in_usd_a_call_with_caching_off_pays_the_models_input_rate_its_tier_s_when_long() {
        let model = CacheModel::default();
        let usd = UsdRates { read: 1.0, write: 10.0, output: 100.0, input: 5.0, long: None };
        let off = summarization_cost_usd(&uncached(100_000, 90_000, 3_000, Some(1_000)), &model, &usd);
        assert!((off - (500_000.0 + 300_000.0)).abs() < 1e-6, "{off}");
        // Below the same input all written, above it mostly read from a warm cache.
        let written = summarization_cost_usd(&compacted(100_000, 0, 3_000, Some(1_000)), &model, &usd);
        let read = summarization_cost_usd(&compacted(100_000, 90_000, 3_000, Some(1_000)), &model, &usd);
        assert!(read < off && off < written, "{read} < {off} < {written}");
        let tiered = UsdRates { long: Some((50_000, [2.0, 20.0, 200.0, 7.0])), ..usd };
        let long = summarization_cost_usd(&uncached(100_000, 0, 3_000, None), &model, &tiered);
        assert!((long - (700_000.0 + 600_000.0)).abs() < 1e-6, "{long}");
        // The built-in table's Sonnet 4.5: input $3, 5-minute write $3.75 per million.
        let sonnet = UsdRates::of(&model, Some("claude-sonnet-4-5")).0;
        assert!((sonnet.input - 3e-6).abs() < 1e-15 && (sonnet.write - 3.75e-6).abs() < 1e-15);
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
        assert!(e[0].cost_usd > 0.0 && !e[0].uncached);
        let off = events(&[uncached(100_000, 90_000, 3_000, Some(1_000))], &model);
        assert_eq!((off[0].read_tokens, off[0].uncached), (0, true));
        let written = events(&[compacted(100_000, 0, 3_000, Some(1_000))], &model);
        assert!(off[0].cost < written[0].cost && off[0].cost_usd < written[0].cost_usd);
    }
}
