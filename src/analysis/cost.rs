//! The cache-aware cost of a replayed run: what each request would pay with a provider's prompt cache.
//!
//! Providers cache prompt prefixes. Pruning an old item changes the prompt from that item on, so the
//! cache must be written again for everything after it (ANCHORS.md §2 and §8; anomalyco/opencode#32515:
//! a prune took a request from $0.24 to $1.83 although the context got smaller; langchain#37815: a
//! re-firing clear rewrote 50k–300k tokens to free one result). The model here, per request:
//!
//! - **warm or cold**: the cache holds the previous request's context if that request was made at
//!   most `ttl` before this one (from the recorded timestamps; a request without a timestamp, or with
//!   no timestamped predecessor, counts as warm). The first request of a context is cold.
//! - **read**: a warm request reads from the cache the prefix it shares with the previous request
//!   ([`RequestRow::shared_prefix_tokens`], computed by the replay); a cold one reads nothing.
//! - **write**: everything else in the context is written (Anthropic: a cache write; OpenAI: plain
//!   uncached input, since OpenAI charges no write premium).
//! - **rewritten**: of the written tokens, those that were already cached in the previous request's
//!   context but sit after the first item a policy changed: the price of a prune beyond the tokens it
//!   frees. A prune on a cold cache forces no rewrite (the point of Claude Code's time-based
//!   microcompact, ANCHORS.md §2).
//!
//! Prices are per token in a stated unit. The presets are *relative* to the uncached input price, so
//! costs come out in **input-token equivalents** (what the prompt costs expressed in uncached input
//! tokens) and stay true whatever a provider's list price is today:
//! - `anthropic`: cache write 1.25×, cache read 0.1× (5-minute cache; the ratio of every row of
//!   Anthropic's price table, platform.claude.com/docs/en/about-claude/pricing, e.g. Claude Sonnet 5.5
//!   $2 input, $2.50 5-minute write, $0.20 read per million tokens); with a TTL over 5 minutes,
//!   write 2× (the 1-hour cache, $4 a million there: [`Prices::for_ttl`]);
//! - `openai`: no write premium (1×), cached input 0.1× (GPT-5 family; GPT-4.1 is 0.25×, GPT-4o
//!   0.5×, per OpenAI's pricing page, developers.openai.com/api/docs/pricing);
//! - `none`: no cache (every token 1×), so cost equals input tokens.
//!
//! Explicit prices (`input=2,write=2.5,read=0.2[,output=10]`) are in USD per million tokens and
//! give USD.
//!
//! **The bill in USD** (`cost_usd`) is priced beside that cost, per request, at the prices of the
//! model the log names for it ([`super::prices`]: the built-in table, or a prices file): reads at
//! the cache-read price, writes at the 5-minute or 1-hour write price by the TTL (the input price
//! for providers that charge no write premium), and the recorded output tokens at the output
//! price (a compaction's summarisation call made with prompt caching off at the plain input
//! price, [`super::summarization`]). Output is the same under every policy; a request whose log records no output tokens adds
//! none (counted in `output_unrecorded`). With explicit prices, those prices apply to every model
//! (output at `output=`, or the table's output price of the model when not given). Where the log
//! records what each request cost (Cline), the recorded total is kept beside it, to hold the
//! as-recorded baseline against. Not modelled: minimum cacheable lengths (1,024 tokens on both
//! providers), OpenAI's 128-token cache granularity and long-context tiers. Pure: no I/O.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use super::prices::MAX_PRICE;
use super::prices::PriceTable;
use crate::model::Tokens;
use crate::result::RequestRow;

/// Prices of input tokens by cache state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Preset name, or `custom`.
    pub name: String,
    /// Price of an uncached input token with no cache at all (the reference of the unit).
    pub input: f64,
    /// Price of a token written to the cache (or sent uncached when a cache exists).
    pub write: f64,
    /// Price of a token read from the cache.
    pub read: f64,
    /// Prices are per this many tokens (1 for relative presets, 1,000,000 for USD per MTok).
    pub per_tokens: f64,
    /// Unit of every cost computed with these prices.
    pub unit: String,
    /// Explicit prices only: USD per million output tokens (`output=`); `None` takes the output
    /// price of the log's model from the table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<f64>,
    /// The per-model USD prices of `cost_usd`: built in, or read from a prices file.
    #[serde(skip)]
    pub table: Arc<PriceTable>,
}

/// The unit of relative presets.
pub const RELATIVE_UNIT: &str = "input-token equivalents";

/// Lifetime of Anthropic's default (5-minute) cache.
const ANTHROPIC_SHORT_TTL_MS: i64 = 5 * 60_000;

impl Prices {
    /// Names of the presets.
    pub const PRESETS: [&'static str; 3] = ["anthropic", "openai", "none"];

    fn relative(name: &str, write: f64, read: f64) -> Prices {
        Prices {
            name: name.into(),
            input: 1.0,
            write,
            read,
            per_tokens: 1.0,
            unit: RELATIVE_UNIT.into(),
            output: None,
            table: PriceTable::built_in(),
        }
    }

    /// These prices with `table` for the per-model USD bill.
    pub fn with_table(self, table: PriceTable) -> Prices {
        Prices { table: Arc::new(table), ..self }
    }

    /// Anthropic's 5-minute cache: write 1.25×, read 0.1×.
    pub fn anthropic() -> Prices {
        Prices::relative("anthropic", 1.25, 0.1)
    }

    /// Anthropic's 1-hour cache: write 2×, read 0.1×.
    pub fn anthropic_1h() -> Prices {
        Prices::relative("anthropic", 2.0, 0.1)
    }

    /// The prices for a cache that lives `ttl_ms` (`None`: never expires): the `anthropic` preset
    /// with a TTL over 5 minutes takes the 1-hour cache's write price (2×), the only cache Anthropic
    /// offers that lives longer; every other price is the same at any TTL.
    pub fn for_ttl(self, ttl_ms: Option<i64>) -> Prices {
        let longer_than_5m = ttl_ms.is_none_or(|t| t > ANTHROPIC_SHORT_TTL_MS);
        let a = Prices::anthropic();
        let is_anthropic = (self.name.as_str(), self.write, self.read, self.unit.as_str())
            == (a.name.as_str(), a.write, a.read, a.unit.as_str());
        if is_anthropic && longer_than_5m {
            Prices { write: Prices::anthropic_1h().write, ..self }
        } else {
            self
        }
    }

    /// OpenAI's automatic cache: no write premium, read 0.1× (GPT-5 family).
    pub fn openai() -> Prices {
        Prices::relative("openai", 1.0, 0.1)
    }

    /// No cache: every input token costs 1.
    pub fn none() -> Prices {
        Prices::relative("none", 1.0, 1.0)
    }

    /// Parses a preset name or `input=X[,write=Y][,read=Z][,output=W]` in USD per million tokens
    /// (`write` and `read` default to `input`), each from 0 to [`MAX_PRICE`] and given once.
    pub fn parse(spec: &str) -> Result<Prices, String> {
        let spec = spec.trim();
        match spec {
            "anthropic" => return Ok(Prices::anthropic()),
            "openai" => return Ok(Prices::openai()),
            "none" => return Ok(Prices::none()),
            _ => {}
        }
        let (mut input, mut write, mut read, mut output) = (None, None, None, None);
        for pair in spec.split(',') {
            let Some((key, value)) = pair.split_once('=') else {
                return Err(format!(
                    "`{spec}` is neither a preset ({}), input=X,write=Y,read=Z,output=W (USD per million tokens) \
                     nor a prices file (.toml or .json)",
                    Prices::PRESETS.join(", ")
                ));
            };
            let v: f64 = value.trim().parse().ok().filter(|v: &f64| (0.0..=MAX_PRICE).contains(v)).ok_or_else(|| {
                format!(
                    "price `{}` in `{spec}` is not a number from 0 to {MAX_PRICE} (USD per million tokens)",
                    value.trim()
                )
            })?;
            let slot = match key.trim() {
                "input" => &mut input,
                "write" => &mut write,
                "read" => &mut read,
                "output" => &mut output,
                other => {
                    return Err(format!(
                        "unknown price `{other}` in `{spec}`; valid: input, write, read, output"
                    ));
                }
            };
            if slot.replace(v).is_some() {
                return Err(format!("price `{}` is given twice in `{spec}`", key.trim()));
            }
        }
        let input = input.ok_or_else(|| format!("`{spec}` needs input=X (USD per million tokens)"))?;
        Ok(Prices {
            name: "custom".into(),
            input,
            write: write.unwrap_or(input),
            read: read.unwrap_or(input),
            per_tokens: 1_000_000.0,
            unit: "USD".into(),
            output,
            table: PriceTable::built_in(),
        })
    }

    /// Cost of `read` cached tokens and `written` uncached ones.
    pub fn cost(&self, read: Tokens, written: Tokens) -> f64 {
        (read as f64 * self.read + written as f64 * self.write) / self.per_tokens
    }
}

/// Parses a cache lifetime: `never`, or a number with `ms`, `s`, `m` or `h` (`0` alone is allowed).
/// Returns milliseconds, or `None` for a cache that never expires.
pub fn parse_ttl(text: &str) -> Result<Option<i64>, String> {
    let t = text.trim();
    if t == "never" {
        return Ok(None);
    }
    if t == "0" {
        return Ok(Some(0));
    }
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" | "min" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return Err(format!("cache TTL `{t}`: expected e.g. 5m, 300s, 1h, 0 or never")),
    };
    let n: f64 = number.parse().map_err(|_| format!("cache TTL `{t}`: `{number}` is not a number"))?;
    Ok(Some((n * scale).round() as i64))
}

/// Renders a TTL the way [`parse_ttl`] reads it.
pub fn format_ttl(ttl: Option<i64>) -> String {
    match ttl {
        None => "never".into(),
        Some(ms) if ms % 3_600_000 == 0 && ms > 0 => format!("{}h", ms / 3_600_000),
        Some(ms) if ms % 60_000 == 0 && ms > 0 => format!("{}m", ms / 60_000),
        Some(ms) if ms % 1_000 == 0 => format!("{}s", ms / 1_000),
        Some(ms) => format!("{ms}ms"),
    }
}

/// The cache model: prices and how long a cached prefix lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheModel {
    /// Prices per cache state.
    pub prices: Prices,
    /// Cache lifetime in milliseconds since the previous request; `None` never expires.
    pub ttl_ms: Option<i64>,
}

impl Default for CacheModel {
    fn default() -> Self {
        CacheModel { prices: Prices::anthropic(), ttl_ms: Some(5 * 60_000) }
    }
}

/// What one request pays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestCost {
    /// The cache did not hold the previous context (first request, after a compaction, or idle
    /// longer than the TTL).
    pub cold: bool,
    /// Tokens read from the cache.
    pub read_tokens: Tokens,
    /// Tokens written (sent uncached).
    pub write_tokens: Tokens,
    /// Of the written tokens, those cached before that a policy's change forced to be written again.
    pub rewritten_tokens: Tokens,
    /// The cost.
    pub cost: f64,
    /// The bill in USD: reads, writes and the recorded output at the model's prices.
    pub cost_usd: f64,
}

/// USD per token of one request's model: what [`request_cost`] prices a request's bill with.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UsdRates {
    /// A token read from the cache.
    pub read: f64,
    /// A token written to the cache (or, for a provider with no write premium, sent uncached): what
    /// every token of a request that is not read costs.
    pub write: f64,
    /// An output token.
    pub output: f64,
    /// A token of a call made with prompt caching off (the plain input price): a compaction's own
    /// summarisation call ([`super::summarization`]), which neither reads nor writes the cache.
    pub input: f64,
    /// The model's long-context tier: a request whose prompt is over `.0` tokens pays the rates
    /// `.1` (read, write, output, input per token) for all of it ([`UsdRates::for_prompt`]).
    pub long: Option<(Tokens, [f64; 4])>,
}

impl UsdRates {
    /// The rates a request whose prompt is `prompt` tokens pays: the long-context tier's when it
    /// is over the tier's bound.
    pub fn for_prompt(&self, prompt: Tokens) -> UsdRates {
        match self.long {
            Some((above, [read, write, output, input])) if prompt > above => {
                UsdRates { read, write, output, input, long: None }
            }
            _ => *self,
        }
    }

    /// The rates of `model` (the log's name) under `cache`, and whether it was priced at the
    /// table's fallback. Explicit USD prices apply to every model; their output price, when not
    /// given, is the model's.
    pub fn of(cache: &CacheModel, model: Option<&str>) -> (UsdRates, bool) {
        let p = &cache.prices;
        let found = p.table.lookup(model);
        let row = found.price;
        let per = 1e-6;
        let rates = if p.unit == "USD" {
            let scale = 1.0 / p.per_tokens;
            UsdRates {
                read: p.read * scale,
                write: p.write * scale,
                output: p.output.unwrap_or(row.output) * per,
                input: p.input * scale,
                long: None,
            }
        } else {
            let ttl = cache.ttl_ms;
            UsdRates {
                read: row.read * per,
                write: row.write(ttl) * per,
                output: row.output * per,
                input: row.input * per,
                long: row
                    .long
                    .map(|l| (l.tokens, [l.read * per, l.write(ttl) * per, l.output * per, l.input * per])),
            }
        };
        (rates, found.fallback && !(p.unit == "USD" && p.output.is_some()))
    }
}

/// The cost of one request row; `previous` is the row before it in the same run. Its bill in USD
/// is at the prices of the row's model ([`request_cost_at`] takes the rates instead).
pub fn request_cost(row: &RequestRow, previous: Option<&RequestRow>, model: &CacheModel) -> RequestCost {
    request_cost_at(row, previous, model, &UsdRates::of(model, row.model.as_deref()).0)
}

/// [`request_cost`] with the USD rates of the row's model given.
pub fn request_cost_at(
    row: &RequestRow,
    previous: Option<&RequestRow>,
    model: &CacheModel,
    usd: &UsdRates,
) -> RequestCost {
    let usd = usd.for_prompt(row.context_tokens);
    let expired = matches!((model.ttl_ms, row.gap_ms), (Some(ttl), Some(gap)) if gap > ttl);
    let cold = row.previous_context_tokens == 0 || expired;
    let read = if cold { 0 } else { row.shared_prefix_tokens.min(row.context_tokens) };
    let write = row.context_tokens - read;
    // The previous context after the cut was cached; what of it is still sent must be written
    // again. That is its items as sent now past the shared prefix, less the placeholder text
    // written now (new text, never cached). Content that arrived since the previous request is
    // not in it, even when the policy removed it at once (`freed_tokens` counts that too).
    let placeholders_added =
        previous.map_or(0, |p| row.categories.placeholders.saturating_sub(p.categories.placeholders));
    let rewritten = if cold {
        0
    } else {
        row.previous_kept_tokens.saturating_sub(read).saturating_sub(placeholders_added).min(write)
    };
    RequestCost {
        cold,
        read_tokens: read,
        write_tokens: write,
        rewritten_tokens: rewritten,
        cost: model.prices.cost(read, write),
        cost_usd: read as f64 * usd.read
            + write as f64 * usd.write
            + row.recorded_output_tokens.unwrap_or(0) as f64 * usd.output,
    }
}

/// One request before which the policy changed the context, priced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PruneEvent {
    /// Request index in its conversation.
    pub request: usize,
    /// Results whose content the policy changed.
    pub changed_results: usize,
    /// Tokens the change removed from the context.
    pub freed_tokens: Tokens,
    /// Cached tokens the change forced to be written again.
    pub rewritten_tokens: Tokens,
    /// The cache was cold anyway (no rewrite is forced).
    pub cold: bool,
    /// Extra cost of this request: rewritten tokens at the write price instead of the read price.
    pub rewrite_cost: f64,
    /// What each later warm request saves by not reading the freed tokens.
    pub saving_per_request: f64,
    /// Later requests needed to recover `rewrite_cost` (`None` when nothing is saved per request).
    pub break_even_requests: Option<f64>,
    /// Requests that follow in the same context (up to the end of the conversation or its next
    /// compaction, which empties the context).
    pub later_requests: usize,
}

impl PruneEvent {
    /// Whether the later requests of the conversation recover the rewrite cost.
    pub fn pays_off(&self) -> bool {
        self.rewrite_cost == 0.0 || self.break_even_requests.is_some_and(|b| self.later_requests as f64 >= b)
    }
}

/// Cost totals of one run or many (they add up).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostTotals {
    /// Requests priced.
    pub requests: usize,
    /// Of them, cold.
    pub cold_requests: usize,
    /// Sum of the contexts.
    pub input_tokens: Tokens,
    /// Tokens read from the cache.
    pub read_tokens: Tokens,
    /// Tokens written.
    pub write_tokens: Tokens,
    /// Written tokens that policy changes forced to be written again.
    pub rewritten_tokens: Tokens,
    /// Tokens freed by policy changes.
    pub freed_tokens: Tokens,
    /// Requests before which the policy changed the context.
    pub prune_events: usize,
    /// The cost.
    pub cost: f64,
    /// Output tokens the log records (the same under every policy).
    pub output_tokens: Tokens,
    /// Requests whose log records no output tokens: their output is not in `cost_usd`.
    pub output_unrecorded: usize,
    /// The whole bill in USD: cache reads, writes and output, at the prices of each request's
    /// model, and the summarisation calls of compactions ([`super::summarization`]).
    pub cost_usd: f64,
    /// Of `cost_usd`, the output.
    pub output_cost_usd: f64,
    /// Of `cost`, the summarisation calls of compactions (0 for a policy that does not compact).
    #[serde(default)]
    pub summarization_cost: f64,
    /// Of `cost_usd`, the summarisation calls of compactions.
    #[serde(default)]
    pub summarization_cost_usd: f64,
    /// What the log records the requests cost, in USD, summed over the requests that record it
    /// (`None`: no request does). Recorded, so the same under every policy.
    pub recorded_cost_usd: Option<f64>,
    /// Requests whose log records what they cost.
    pub recorded_cost_requests: usize,
    /// Requests priced at the table's fallback, by the model name the log gives (`(none)` when it
    /// gives none): names the price table does not know.
    pub fallback_models: BTreeMap<String, usize>,
}

/// The key of [`CostTotals::fallback_models`] for requests whose log names no model.
pub const NO_MODEL: &str = "(none)";

impl std::ops::AddAssign for CostTotals {
    fn add_assign(&mut self, o: CostTotals) {
        self.output_tokens += o.output_tokens;
        self.output_unrecorded += o.output_unrecorded;
        self.cost_usd += o.cost_usd;
        self.output_cost_usd += o.output_cost_usd;
        self.summarization_cost += o.summarization_cost;
        self.summarization_cost_usd += o.summarization_cost_usd;
        self.recorded_cost_usd = match (self.recorded_cost_usd, o.recorded_cost_usd) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        self.recorded_cost_requests += o.recorded_cost_requests;
        for (m, n) in o.fallback_models {
            *self.fallback_models.entry(m).or_insert(0) += n;
        }
        self.requests += o.requests;
        self.cold_requests += o.cold_requests;
        self.input_tokens += o.input_tokens;
        self.read_tokens += o.read_tokens;
        self.write_tokens += o.write_tokens;
        self.rewritten_tokens += o.rewritten_tokens;
        self.freed_tokens += o.freed_tokens;
        self.prune_events += o.prune_events;
        self.cost += o.cost;
    }
}

/// Prices every request of a run; returns the totals and one entry per prune event.
pub fn cost_of_run(rows: &[RequestRow], model: &CacheModel) -> (CostTotals, Vec<PruneEvent>) {
    let mut totals = CostTotals::default();
    let mut events = Vec::new();
    let p = &model.prices;
    // A compaction restarts the context (the next row has no previous context), so what a prune
    // freed is saved only until then: `ends[i]` is the first row of the next context after row i.
    let mut ends = vec![rows.len(); rows.len()];
    for i in (0..rows.len().saturating_sub(1)).rev() {
        ends[i] = if rows[i + 1].previous_context_tokens == 0 { i + 1 } else { ends[i + 1] };
    }
    let mut pricer = RunPricer::new(model);
    for (i, row) in rows.iter().enumerate() {
        let (usd, fallback) = pricer.rates(&row.model);
        let c = request_cost_at(row, i.checked_sub(1).map(|j| &rows[j]), model, &usd);
        add_bill(&mut totals, row, &c, &usd.for_prompt(row.context_tokens), fallback);
        totals.requests += 1;
        totals.cold_requests += usize::from(c.cold);
        totals.input_tokens += row.context_tokens;
        totals.read_tokens += c.read_tokens;
        totals.write_tokens += c.write_tokens;
        totals.rewritten_tokens += c.rewritten_tokens;
        let summarization = super::summarization::summarization_cost(row, model);
        let summarization_usd = super::summarization::summarization_cost_usd(row, model, &usd);
        totals.cost += c.cost + summarization;
        totals.summarization_cost += summarization;
        totals.cost_usd += summarization_usd;
        totals.summarization_cost_usd += summarization_usd;
        if row.changed_results > 0 {
            totals.prune_events += 1;
            totals.freed_tokens += row.freed_tokens;
            let rewrite_cost = c.rewritten_tokens as f64 * (p.write - p.read) / p.per_tokens;
            let saving_per_request = row.freed_tokens as f64 * p.read / p.per_tokens;
            events.push(PruneEvent {
                request: row.request,
                changed_results: row.changed_results,
                freed_tokens: row.freed_tokens,
                rewritten_tokens: c.rewritten_tokens,
                cold: c.cold,
                rewrite_cost,
                saving_per_request,
                break_even_requests: (saving_per_request > 0.0).then(|| rewrite_cost / saving_per_request),
                later_requests: ends[i] - i - 1,
            });
        }
    }
    (totals, events)
}

/// The bill in USD of a run's `rows`: [`cost_of_run`]'s `cost_usd` to the bit (the same requests
/// priced by the same functions, added in the same order), without its other totals and events,
/// for a grid that ranks many runs by it.
pub fn cost_usd_of_run(rows: &[RequestRow], model: &CacheModel) -> f64 {
    RunPricer::new(model).cost_usd_from(rows, 0, 0.0, None)
}

/// Prices runs one after another, as [`cost_usd_of_run`] does, for a grid of many runs of one
/// conversation: a model's rates are looked up again only when the model changes, from one run
/// to the next too, and a run that shares its first rows with one priced before goes on from
/// that run's running total (the same additions in the same order: the same bill to the bit).
pub struct RunPricer<'m> {
    model: &'m CacheModel,
    /// The last model priced, its rates and whether they are the fallback's ([`UsdRates::of`]).
    last: Option<(Option<std::sync::Arc<str>>, UsdRates, bool)>,
}

impl<'m> RunPricer<'m> {
    /// A pricer at `model`'s prices, no rates looked up yet.
    pub fn new(model: &'m CacheModel) -> Self {
        RunPricer { model, last: None }
    }

    /// [`UsdRates::of`] `name`, looked up again only when the name changes: a run names one
    /// model, or a few in long stretches.
    fn rates(&mut self, name: &Option<std::sync::Arc<str>>) -> (UsdRates, bool) {
        match &self.last {
            Some((m, usd, fallback)) if m.as_deref() == name.as_deref() => (*usd, *fallback),
            _ => {
                let (usd, fallback) = UsdRates::of(self.model, name.as_deref());
                self.last = Some((name.clone(), usd, fallback));
                (usd, fallback)
            }
        }
    }

    /// The bill of `rows`, given `total`, the bill of `rows[..from]` (`0.0` and `0` for a whole
    /// run); the total after each row from `from` on is pushed to `running` when given.
    pub fn cost_usd_from(
        &mut self,
        rows: &[RequestRow],
        from: usize,
        mut total: f64,
        mut running: Option<&mut Vec<f64>>,
    ) -> f64 {
        for (i, row) in rows.iter().enumerate().skip(from) {
            let (usd, _) = self.rates(&row.model);
            total += request_cost_at(row, i.checked_sub(1).map(|j| &rows[j]), self.model, &usd).cost_usd;
            total += super::summarization::summarization_cost_usd(row, self.model, &usd);
            if let Some(r) = running.as_deref_mut() {
                r.push(total);
            }
        }
        total
    }
}

/// Adds a request's bill, recorded output and recorded cost to the totals.
fn add_bill(totals: &mut CostTotals, row: &RequestRow, c: &RequestCost, usd: &UsdRates, fallback: bool) {
    totals.cost_usd += c.cost_usd;
    match row.recorded_output_tokens {
        Some(n) => {
            totals.output_tokens += n;
            totals.output_cost_usd += n as f64 * usd.output;
        }
        None => totals.output_unrecorded += 1,
    }
    if let Some(micro) = row.recorded_cost_micro_usd {
        *totals.recorded_cost_usd.get_or_insert(0.0) += micro as f64 / 1e6;
        totals.recorded_cost_requests += 1;
    }
    if fallback {
        let name = row.model.as_deref().unwrap_or(NO_MODEL);
        *totals.fallback_models.entry(name.to_owned()).or_insert(0) += 1;
    }
}

#[cfg(test)]
mod tests;
