//! The calibration model: what a conversation's log does not hold but the provider billed, estimated
//! from the prompt sizes the log records, so that every replayed context is in the provider's
//! tokens and as large as the prompt that was really sent.
//!
//! **The model.** The provider's prompt size of request `k` is `a_s + b·x_k + c·n_k + d·t_k`,
//! where `x_k` is the replayed context of policy `none` as recorded (every measured item since the
//! last compaction, whatever its category, in the report's tokenizer), `n_k` its items, `t_k` the
//! requests since the first of its segment (the requests between two compactions, [`positions`]),
//! `a_s` the overhead of the segment the log does not hold (system prompt, tool schemas,
//! reminders), `b` the provider's tokens per report token, `c` the framing per item and `d` the
//! growth per request.
//!
//! - `b`: 1 where the report's tokenizer is the provider's ([`Method::Exact`]: OpenAI formats
//!   counted with o200k). Elsewhere ([`Method::Ratio`]: Claude, Gemini, unknown providers, or a
//!   proxy tokenizer) `y_{k+1} - y_k` is the provider's count of what request `k+1` appended and
//!   `x_{k+1} - x_k` the report's count of the same items, so `b` is the median of their ratios,
//!   each weighted by `x_{k+1} - x_k`, over consecutive recorded requests with no compaction
//!   between them that append at least [`MIN_DELTA`] tokens and whose recorded size grows. A median
//!   is not moved by a cache miss or one odd step; the weight keeps tiny appends (where one token of
//!   framing is a large ratio) from deciding. With no such pair, the agent's default ratio.
//!   Under [`Tokenizer::Provider`] an OpenAI model is counted with its own encoding
//!   ([`counted_with`], exact), and elsewhere each content kind gets its own `b` beside the single
//!   one ([`Method::Kinds`]; [`kinds`] has the kinds and their fit).
//! - `c`: where `b` is 1, the weighted median per appended item of what the provider counted
//!   beyond the report; 0 elsewhere, where `b` takes it in.
//! - `d`: where `b` is fitted, the median over consecutive recorded requests of one segment of how
//!   much the gap `y − b·x` grew per request between them (content each request adds that the log
//!   does not hold, which `b`, decided by large appends, does not show); 0 where `b` is 1.
//! - `a_s`: the median over the segment's recorded requests of `y_k − b·x_k − c·n_k − d·t_k` where
//!   it has [`MIN_SEGMENT`] of them (the overhead changes at a compaction), else the same median
//!   over the conversation, `a` (one outlier does not move a median).
//!
//! **Applied** ([`apply`]): every measured text's report-token count is multiplied by `b` and
//! rounded, item by item (so a policy that drops an item saves `b` times its count: counterfactual
//! contexts are in provider tokens too), `a_s` is added as an [`Category::Unrecorded`] item at the
//! start and after every compaction, and the growth as a [`Category::Framing`] item before each
//! request (no message of its own; a compaction summarises it away). The policies'
//! own estimators (`decide`, `len/4`) are what the agent counts and are not scaled. A log with no
//! recorded usage gets its agent's default `a` and `b` ([`Method::Default`], measured on the
//! shared corpus: docs/calibration.md; no growth), and so does one with fewer than
//! [`MIN_RECORDED`] recorded requests; a format with no default is then left as measured
//! ([`Method::None`]).
//!
//! **Step markers** ([`steps`]): content the log marks but does not hold (a Codex web search's
//! results, Claude Code's plan-mode injection) is sized from the recorded step across the mark,
//! added to the prediction from there on, and kept out of the ratio's appends.
//!
//! **The quality gate** ([`leave_one_out`]): each recorded request is predicted from the model
//! fitted without it (its deltas, its gap and its growth steps left out), so the error is not a
//! fit to itself.
//! Pure: no I/O, no printing.

pub mod kinds;
pub mod provider;
pub mod steps;

use crate::measure::{Category, MeasuredConversation, MeasuredItem, Whole};
pub use crate::model::{Calibration, KindRatios, Method};
use crate::model::{Conversation, Item, Tokens};
use crate::tokens::{Meter, Tokenizer};
use kinds::{KINDS, Kind};
use provider::openai;
pub use provider::{known_model, provider, provider_default, provider_of, provider_of_model};

/// Fewest recorded requests a conversation's own fit is made from (with fewer, one request
/// decides its overhead; the agent's default is used, or nothing). The quality gate asks as many
/// (the reconciliation's `MIN_CALIBRATED`).
pub const MIN_RECORDED: usize = 3;

/// Smallest append (report tokens) whose usage delta is used to fit the ratio.
pub const MIN_DELTA: Tokens = 50;

/// Fewest appends the framing is fitted from (with fewer, one odd step would decide it; it is 0).
pub const MIN_FRAMING_PAIRS: usize = 3;

/// Fewest recorded requests a segment between compactions fits its own overhead from (with fewer,
/// the conversation's overhead stands in).
pub const MIN_SEGMENT: usize = 3;

/// Fewest slopes between recorded requests a growth is fitted from (with fewer, a segment takes
/// the conversation's, and the conversation's is 0).
pub const MIN_GROWTH_STEPS: usize = 3;

/// Farthest apart (in recorded requests) two requests whose gaps give a slope of the growth: the
/// pairs grow with the square of the requests, this keeps them linear in a long session.
pub const MAX_GROWTH_LAG: usize = 32;

/// One request as the estimator sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Replayed context (policy `none`, as recorded), report tokens.
    pub replayed: Tokens,
    /// Recorded prompt size, provider tokens.
    pub recorded: Option<Tokens>,
    /// A compaction lies between this request and the one before.
    pub after_compaction: bool,
    /// Items in the replayed context ([`MeasuredItem::framed`]: each message, call and output the
    /// API wraps).
    pub items: Tokens,
    /// `replayed` by content kind ([`Kind`]), where asked for ([`samples_by_kind`]); all 0
    /// otherwise.
    pub by_kind: [Tokens; KINDS],
    /// Step markers in the context since the last compaction ([`steps`]: content the log marks but
    /// does not hold, sized from the recorded step; not in `replayed`).
    pub marks: u32,
    /// Image tokens in the context ([`samples_by_kind`] only; 0 otherwise): sized by the
    /// provider's own rule from the dimensions, so provider tokens already, never scaled by a
    /// ratio, and not in `replayed`.
    pub unscaled: Tokens,
}

/// The replayed context of every request of `measured` (policy `none`, outputs as recorded, no
/// split): every item since the last compaction, of any category but [`Category::Unrecorded`]
/// and [`Category::Framing`], less the turn-scoped texts of earlier turns (hidden reasoning and
/// the summaries of its reasoning items), which the replay drops when a human turn starts (as the
/// Responses API stops re-sending them); and the framed items among them.
pub fn samples(measured: &MeasuredConversation) -> Vec<Sample> {
    samples_in(measured, false)
}

/// [`samples`] with each replayed context also split by content kind ([`Sample::by_kind`]; the
/// turn-scoped texts are prose), and the images kept apart ([`Sample::unscaled`]): the samples of
/// `--tokenizer provider` where the provider's tokenizer is not public.
pub fn samples_by_kind(measured: &MeasuredConversation) -> Vec<Sample> {
    samples_in(measured, true)
}

/// [`samples`], by kind where `by_kind`.
fn samples_in(measured: &MeasuredConversation, by_kind: bool) -> Vec<Sample> {
    let (mut context, mut compacted, mut items, mut marks, mut unscaled) = (0, false, 0, 0, 0);
    let mut kinds = [0; KINDS];
    // The turn-scoped texts (and how many of them are framed) since the last human turn.
    let (mut scoped, mut scoped_items) = (0, 0);
    let (mut out, mut clearing) = (Vec::new(), steps::Clearing::new(by_kind));
    for item in &measured.items {
        items += Tokens::from(item.framed());
        let placeholders = clearing.step(item, &mut context, &mut kinds);
        let marker = steps::marker(item);
        marks += u32::from(marker.is_some());
        let added = match item {
            MeasuredItem::Text { category: Category::Unrecorded | Category::Framing, .. } => 0,
            MeasuredItem::Text { .. } if marker.is_some() => 0,
            MeasuredItem::Text { category: Category::Images, measure, .. } if by_kind => {
                unscaled += measure.tokens;
                0
            }
            MeasuredItem::Text { measure, turn_start, turn_scoped, .. } => {
                if *turn_start {
                    let gone = std::mem::take(&mut scoped);
                    context -= gone;
                    if by_kind {
                        kinds[Kind::Prose.index()] -= gone;
                    }
                    items -= std::mem::take(&mut scoped_items);
                }
                if *turn_scoped {
                    scoped += measure.tokens;
                    scoped_items += Tokens::from(item.framed());
                }
                measure.tokens
            }
            MeasuredItem::ToolCall { measure, .. } => measure.tokens,
            MeasuredItem::ToolResult(sizes, _) => sizes.output().tokens,
            MeasuredItem::Cleared { .. } => placeholders,
            MeasuredItem::Compaction { summary } => {
                context = summary.map_or(0, |s| s.tokens);
                kinds = [0; KINDS];
                kinds[Kind::Prose.index()] = if by_kind { context } else { 0 };
                items = Tokens::from(summary.is_some());
                (scoped, scoped_items, marks, unscaled) = (0, 0, 0, 0);
                compacted = true;
                0
            }
            MeasuredItem::Request { usage, .. } => {
                out.push(Sample {
                    replayed: context,
                    recorded: usage.map(|u| u.input_tokens),
                    after_compaction: compacted,
                    items,
                    by_kind: kinds,
                    marks,
                    unscaled,
                });
                compacted = false;
                0
            }
        };
        if added > 0 {
            context += added;
            if let Some(k) = by_kind.then(|| Kind::of_item(item)).flatten() {
                kinds[k.index()] += added;
            }
        }
    }
    out
}

/// The weighted median of `(value, weight)` pairs: the smallest value whose cumulative weight
/// reaches half the total (`None` for no pairs).
fn weighted_median(mut pairs: Vec<(f64, f64)>) -> Option<f64> {
    pairs.sort_by(|x, y| x.0.total_cmp(&y.0));
    let half = pairs.iter().map(|p| p.1).sum::<f64>() / 2.0;
    let mut sum = 0.0;
    pairs
        .into_iter()
        .find(|p| {
            sum += p.1;
            sum >= half
        })
        .map(|p| p.0)
}

/// The median of `values` (the lower one of an even count), `None` for none.
fn median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len().saturating_sub(1) / 2).copied()
}

/// Where each sample sits: its segment (compactions before it) and its step (requests since the
/// first of its segment).
pub fn positions(samples: &[Sample]) -> Vec<(usize, Tokens)> {
    let (mut segment, mut step) = (0, 0);
    samples
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i > 0 && s.after_compaction {
                (segment, step) = (segment + 1, 0);
            } else if i > 0 {
                step += 1;
            }
            (segment, step)
        })
        .collect()
}

/// The fitted model: `recorded ≈ overhead_s + ratio·replayed + framing·items + growth·step`,
/// `overhead_s` the overhead of the request's segment.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// `a`, provider tokens: the conversation's, and the fallback of a segment with too few
    /// recorded requests.
    pub overhead: f64,
    /// `a` of each segment between compactions ([`MIN_SEGMENT`]).
    pub segments: Vec<f64>,
    /// `b`, provider tokens per report token.
    pub ratio: f64,
    /// `b` of each content kind, where fitted per kind ([`kinds::fit`]).
    pub kinds: Option<[f64; KINDS]>,
    /// `c`, provider tokens per item in the context.
    pub framing: f64,
    /// `d`, provider tokens the log does not hold added per request since the segment started:
    /// the conversation's, and the fallback of a segment with too few recorded requests.
    pub growth: f64,
    /// `d` of each segment between compactions ([`MIN_GROWTH_STEPS`]; empty where exact).
    pub segment_growth: Vec<f64>,
    /// The size of each step marker, by segment and order ([`steps::sizes`]).
    pub steps: Vec<Vec<f64>>,
}

impl Fit {
    /// The predicted prompt size of `s`, at `position` ([`positions`]).
    pub fn predict(&self, s: &Sample, (segment, step): (usize, Tokens)) -> f64 {
        let overhead = self.segments.get(segment).copied().unwrap_or(self.overhead);
        let growth = self.segment_growth.get(segment).copied().unwrap_or(self.growth);
        let marked = steps::in_context(&self.steps, segment, s);
        overhead
            + scale(self.ratio, self.kinds, s)
            + self.framing * s.items as f64
            + growth * step as f64
            + marked
    }
}

/// The provider's count of `s`'s replayed context: `ratio · replayed`, or the sum over the kinds
/// of each kind's ratio times its count; and its images as they are ([`Sample::unscaled`]).
fn scale(ratio: f64, kinds: Option<[f64; KINDS]>, s: &Sample) -> f64 {
    let scaled = match kinds {
        Some(r) => (0..KINDS).map(|k| r[k] * s.by_kind[k] as f64).sum(),
        None => ratio * s.replayed as f64,
    };
    scaled + s.unscaled as f64
}

/// What a fit is asked to do ([`fit_inputs`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inputs {
    /// `b` is 1: the report's tokenizer is the provider's.
    pub exact: bool,
    /// `b` when no usage delta qualifies.
    pub default_ratio: f64,
    /// Fit a ratio per content kind ([`kinds::fit`]; the samples must be [`samples_by_kind`]).
    pub kinds: bool,
}

/// The slopes `(g_j − g_i) / (t_j − t_i)` of the gaps of every pair of kept recorded requests of
/// one segment at most [`MAX_GROWTH_LAG`] recorded requests apart (`gaps`: `(index, gap)` pairs in
/// order), with the segment of each.
fn slopes(gaps: &[(usize, f64)], pos: &[(usize, Tokens)]) -> Vec<(usize, f64)> {
    let mut out = Vec::new();
    for (k, &(i, gi)) in gaps.iter().enumerate() {
        for &(j, gj) in gaps[k + 1..].iter().take(MAX_GROWTH_LAG) {
            let ((si, ti), (sj, tj)) = (pos[i], pos[j]);
            if si == sj && tj > ti {
                out.push((si, (gj - gi) / (tj - ti) as f64));
            }
        }
    }
    out
}

/// `d` of each segment and of the conversation: the median of the slopes of the gaps between
/// pairs of recorded requests ([`slopes`]: the Theil–Sen estimate of the gap's trend), the
/// segment's own where it has at least [`MIN_GROWTH_STEPS`] slopes, else the conversation's (its
/// slopes pooled; 0 with fewer); never negative. The trend, not the typical step: on Claude Code
/// logs the gap rises by a few tokens at most requests and falls by hundreds at a few (a
/// reminder that leaves), so the median of consecutive steps over-states it.
fn growths(gaps: &[(usize, f64)], pos: &[(usize, Tokens)]) -> (f64, Vec<f64>) {
    let all = slopes(gaps, pos);
    let trend = |v: Vec<f64>| (v.len() >= MIN_GROWTH_STEPS).then(|| median(v).unwrap_or(0.0).max(0.0));
    let pooled = trend(all.iter().map(|s| s.1).collect()).unwrap_or(0.0);
    let count = pos.last().map_or(0, |p| p.0 + 1);
    let per = (0..count)
        .map(|seg| trend(all.iter().filter(|s| s.0 == seg).map(|s| s.1).collect()).unwrap_or(pooled))
        .collect();
    (pooled, per)
}

/// The overhead of each segment: the median of its gaps less its growth (`(index, gap)` pairs),
/// where it has at least [`MIN_SEGMENT`], else `fallback`.
fn segment_overheads(
    gaps: &[(usize, f64)],
    pos: &[(usize, Tokens)],
    growth: &[f64],
    fallback: f64,
) -> Vec<f64> {
    let count = pos.last().map_or(0, |p| p.0 + 1);
    let mut per: Vec<Vec<f64>> = vec![Vec::new(); count];
    for &(i, g) in gaps {
        let (segment, step) = pos[i];
        per[segment].push(g - growth.get(segment).copied().unwrap_or(0.0) * step as f64);
    }
    per.into_iter()
        .map(|v| if v.len() >= MIN_SEGMENT { median(v).unwrap_or(fallback) } else { fallback })
        .collect()
}

/// The model fitted on `samples` without the request `skip` (see the module doc); `inputs.exact`
/// fixes `b` at 1 and fits the framing, `inputs.default_ratio` is `b` when no usage delta
/// qualifies, `inputs.kinds` fits a ratio per kind beside it. `None` when no other request has a
/// recorded size.
pub fn fit(samples: &[Sample], inputs: &Inputs, skip: Option<usize>) -> Option<Fit> {
    fit_with(samples, inputs, skip, &[])
}

/// [`fit`], the step markers' own sizes `own` ([`steps::own_sizes`]) standing in where no step
/// sizes them.
pub fn fit_with(
    samples: &[Sample],
    inputs: &Inputs,
    skip: Option<usize>,
    own: &[Vec<Tokens>],
) -> Option<Fit> {
    let Inputs { exact, default_ratio, .. } = *inputs;
    let kept = |i: usize| Some(i) != skip;
    // Consecutive recorded requests with no compaction and no step marker between them, both kept.
    let pairs = || {
        samples.windows(2).enumerate().filter_map(move |(i, w)| {
            let (y0, y1) = (w[0].recorded?, w[1].recorded?);
            let plain = !w[1].after_compaction && w[1].marks == w[0].marks;
            // Appended images are provider tokens already: the rest of the step is scaled text.
            let y1 = y1.checked_sub(w[1].unscaled.checked_sub(w[0].unscaled)?)?;
            (kept(i) && kept(i + 1) && plain && y1 > y0).then_some((w[0], w[1], y1 - y0))
        })
    };
    let (ratio, framing, kinds) = if exact {
        // Of what a request appends, the provider's count less the report's is framing: its
        // median per appended item, each weighted by the items appended.
        let per_item: Vec<(f64, f64)> = pairs()
            .filter_map(|(s0, s1, dy)| {
                let dn = s1.items.checked_sub(s0.items).filter(|&n| n > 0)?;
                let dx = s1.replayed.checked_sub(s0.replayed)?;
                Some(((dy as f64 - dx as f64) / dn as f64, dn as f64))
            })
            .collect();
        let enough = per_item.len() >= MIN_FRAMING_PAIRS;
        (1.0, if enough { weighted_median(per_item).unwrap_or(0.0).max(0.0) } else { 0.0 }, None)
    } else {
        let appended = || {
            pairs().filter_map(|(s0, s1, dy)| {
                let dx = s1.replayed.checked_sub(s0.replayed).filter(|&dx| dx >= MIN_DELTA)?;
                Some((s0, s1, dx, dy))
            })
        };
        let deltas = appended().map(|(_, _, dx, dy)| (dy as f64 / dx as f64, dx as f64));
        let ratio = weighted_median(deltas.collect()).unwrap_or(default_ratio);
        let kinds = if inputs.kinds { kinds::fit(&appends(appended()), ratio) } else { None };
        (ratio, 0.0, kinds)
    };
    let steps = steps::sizes(samples, (ratio, kinds, framing), skip, own);
    let gaps = gaps(samples, (ratio, kinds, framing), &steps, skip);
    let pos = positions(samples);
    let (growth, segment_growth) = if exact { (0.0, Vec::new()) } else { growths(&gaps, &pos) };
    let overhead = median(gaps.iter().map(|&(i, g)| g - growth * pos[i].1 as f64).collect())?;
    let segments = segment_overheads(&gaps, &pos, &segment_growth, overhead);
    Some(Fit { overhead, segments, ratio, kinds, framing, growth, segment_growth, steps })
}

/// The appends by kind of consecutive requests `(s0, s1, Δx, Δy)` whose kinds' counts grew (an
/// append that also drops texts of a kind, a turn's reasoning, is left out: its kinds' counts
/// are not what was appended).
fn appends(pairs: impl Iterator<Item = (Sample, Sample, Tokens, Tokens)>) -> Vec<kinds::Append> {
    pairs
        .filter_map(|(s0, s1, _, dy)| {
            let mut x = [0.0; KINDS];
            for (x, (&after, &before)) in x.iter_mut().zip(s1.by_kind.iter().zip(&s0.by_kind)) {
                *x = after.checked_sub(before)? as f64;
            }
            Some((x, dy as f64))
        })
        .collect()
}

/// `(index, recorded − scaled replayed − framing·items − step markers)` of every recorded request
/// but `skip` ([`scale`], [`steps::in_context`]).
fn gaps(
    samples: &[Sample],
    (ratio, kinds, framing): (f64, Option<[f64; KINDS]>, f64),
    steps: &[Vec<f64>],
    skip: Option<usize>,
) -> Vec<(usize, f64)> {
    let pos = positions(samples);
    let sums = steps::running_sums(steps);
    let gap = |i: usize, s: &Sample| {
        let marked =
            sums.get(pos[i].0).and_then(|v| v.get(s.marks as usize).or(v.last())).copied().unwrap_or(0.0);
        Some(s.recorded? as f64 - scale(ratio, kinds, s) - framing * s.items as f64 - marked)
    };
    samples
        .iter()
        .enumerate()
        .filter(|&(i, _)| Some(i) != skip)
        .filter_map(|(i, s)| Some((i, gap(i, s)?)))
        .collect()
}

/// What an agent's logs show when they record usage: its default overhead and ratio for logs
/// that do not (o200k; docs/calibration.md has the command that measured them).
pub fn agent_default(format: &str) -> Option<(Tokens, f64)> {
    Some(match format {
        "claude-code" => (17_200, 1.26),
        "claude-stream" => (49_300, 1.13),
        "codex" => (5_500, 1.0),
        "gemini-cli" => (5_100, 1.05),
        "mini-swe-agent" => (0, 1.25),
        "openhands" => (3_400, 1.24),
        _ => return None,
    })
}

/// The tokenizer a conversation of `format` whose log names `model` counts with when the report's
/// is `tokenizer`: `tokenizer` itself, but for [`Tokenizer::Provider`] the OpenAI model's own
/// ([`Tokenizer::of_openai_model`]: cl100k for `gpt-4`, `gpt-3.5`) and o200k for any other
/// provider (scaled by the ratio per kind).
pub fn counted_with(format: &str, model: Option<&str>, tokenizer: Tokenizer) -> Tokenizer {
    match tokenizer {
        Tokenizer::Provider if openai(format, model) => Tokenizer::of_openai_model(model),
        Tokenizer::Provider => Tokenizer::O200k,
        t => t,
    }
}

/// The meter a conversation of `format` whose log names `model` is measured and replayed with
/// ([`counted_with`], [`Meter::resolved`]).
pub fn meter_for<'m>(meter: &'m Meter, format: &str, model: Option<&str>) -> &'m Meter {
    meter.resolved(Some(counted_with(format, model, meter.choice())))
}

/// Whether the report's tokenizer counts as the provider of the conversation does ([`provider`]:
/// an OpenAI model, or an OpenAI format where no model is named, counted with its tokenizer;
/// `provider` always does for them).
pub fn exact_for(format: &str, model: Option<&str>, tokenizer: Tokenizer) -> bool {
    openai(format, model) && counted_with(format, model, tokenizer) == Tokenizer::of_openai_model(model)
}

/// What the fit of a conversation of `format` whose log names `model`, counted with `tokenizer`,
/// is asked to do: `b` fixed at 1 where exact, the ratio to use when no usage delta qualifies, and
/// a ratio per kind where the tokenizer is `provider` and not exact.
pub fn fit_inputs(format: &str, model: Option<&str>, tokenizer: Tokenizer) -> Inputs {
    let exact = exact_for(format, model, tokenizer);
    let default_ratio = if exact { 1.0 } else { agent_default(format).map_or(1.0, |d| d.1) };
    Inputs { exact, default_ratio, kinds: !exact && tokenizer == Tokenizer::Provider }
}

/// The model `measured`'s log names ([`known_model`] of its requests').
pub fn model_of(measured: &MeasuredConversation) -> Option<&str> {
    known_model(measured.items.iter().filter_map(|item| match item {
        MeasuredItem::Request { model, .. } => model.as_deref(),
        _ => None,
    }))
}

/// The model `conversation`'s log names ([`known_model`] of its requests').
pub fn model_named(conversation: &Conversation) -> Option<&str> {
    known_model(conversation.items.iter().filter_map(|item| match item {
        Item::Request(r) => r.model.as_deref(),
        _ => None,
    }))
}

/// The calibration of `measured` (measured with no overhead) read by `format` and counted with
/// `tokenizer`: fitted on every recorded request when there are at least [`MIN_RECORDED`], else
/// the agent's default, else none. The provider is the model's the log names, else the format's.
pub fn calibrate(measured: &MeasuredConversation, format: &str, tokenizer: Tokenizer) -> Calibration {
    let model = model_of(measured);
    let samples = if fit_inputs(format, model, tokenizer).kinds {
        samples_by_kind(measured)
    } else {
        samples(measured)
    };
    from_samples(&samples, format, model, tokenizer)
}

/// [`calibrate`] of the conversation whose requests are `samples` and whose log names `model`.
pub fn from_samples(
    samples: &[Sample],
    format: &str,
    model: Option<&str>,
    tokenizer: Tokenizer,
) -> Calibration {
    let inputs = fit_inputs(format, model, tokenizer);
    let recorded = samples.iter().filter(|s| s.recorded.is_some()).count();
    let fitted = if recorded >= MIN_RECORDED { fit(samples, &inputs, None) } else { None };
    let mut c = match fitted {
        Some(f) => Calibration {
            method: match (inputs.exact, f.kinds) {
                (true, _) => Method::Exact,
                (false, Some(_)) => Method::Kinds,
                (false, None) => Method::Ratio,
            },
            overhead: f.overhead.round().max(0.0) as Tokens,
            ratio: f.ratio,
            framing: f.framing,
            growth: f.growth,
            kinds: f.kinds.map(|r| KindRatios {
                prose: r[0],
                code: r[1],
                tool_output: r[2],
                arguments: r[3],
            }),
            ..Calibration::NONE
        },
        None => match agent_default(format) {
            Some((a, _)) => Calibration {
                method: Method::Default,
                overhead: a,
                ratio: inputs.default_ratio,
                ..Calibration::NONE
            },
            None => match provider_default(format, model).filter(|_| inputs.kinds) {
                Some(ratio) => Calibration { method: Method::Default, ratio, ..Calibration::NONE },
                None => Calibration::NONE,
            },
        },
    };
    if tokenizer == Tokenizer::Provider {
        c.tokenizer = counted_with(format, model, tokenizer).encoding();
    }
    c
}

/// The ratios of `k` in the order of [`Kind::ALL`].
fn kind_array(k: &KindRatios) -> [f64; KINDS] {
    [k.prose, k.code, k.tool_output, k.arguments]
}

/// `tokens` times `ratio`, rounded.
fn scaled(tokens: Tokens, ratio: f64) -> Tokens {
    (tokens as f64 * ratio).round() as Tokens
}

/// Applies `c` to `measured` (see the module doc): report tokens scaled by the ratio, the overhead
/// added as an unrecorded item at the start and after every compaction (each segment's own where
/// `c` was fitted and the segment has [`MIN_SEGMENT`] recorded requests), each segment's growth
/// before each request; and the overhead a compaction the replay makes restarts with
/// ([`MeasuredConversation::restart_overhead`]).
pub fn apply(measured: &mut MeasuredConversation, c: &Calibration) {
    let kinds = c.kinds.as_ref().map(kind_array);
    let (overheads, growth, marked): (Vec<Tokens>, Vec<f64>, _) = match c.method {
        Method::Exact | Method::Ratio | Method::Kinds => {
            let samples = if by_kind(c) { samples_by_kind(measured) } else { samples(measured) };
            let model = (c.ratio, kinds, c.framing);
            let marked = steps::sizes(&samples, model, None, &steps::own_sizes(&measured.items));
            let gaps = gaps(&samples, model, &marked, None);
            let pos = positions(&samples);
            let growth = if c.method != Method::Exact { growths(&gaps, &pos).1 } else { Vec::new() };
            let fitted = segment_overheads(&gaps, &pos, &growth, c.overhead as f64);
            (fitted.into_iter().map(|a| a.round().max(0.0) as Tokens).collect(), growth, marked)
        }
        Method::Default | Method::Override | Method::None => (Vec::new(), Vec::new(), Vec::new()),
    };
    measured.restart_overhead = restart_overhead(&overheads);
    if let Some(kinds) = kinds {
        for item in &mut measured.items {
            if let Some(k) = Kind::of_item(item) {
                scale_item(item, kinds[k.index()]);
            }
        }
    } else if c.ratio != 1.0 {
        // Under `provider` the images are the provider's tokens already ([`Sample::unscaled`]).
        let provider = c.tokenizer.is_some();
        for item in measured.items.iter_mut().filter(|i| !(provider && is_image(i))) {
            scale_item(item, c.ratio);
        }
    }
    steps::apply(&mut measured.items, &marked);
    add_unseen(measured, &overheads, c.overhead, &growth);
    measured.add_framing(c.framing);
    measured.calibration = *c;
}

/// Whether `c` was fitted on [`samples_by_kind`]: under `--tokenizer provider` where the
/// provider's tokenizer is not public (a ratio per kind, or one ratio where no kind qualified).
fn by_kind(c: &Calibration) -> bool {
    c.tokenizer.is_some() && matches!(c.method, Method::Kinds | Method::Ratio)
}

/// Whether `item` is an image (sized by the provider's rule from its dimensions).
fn is_image(item: &MeasuredItem) -> bool {
    matches!(item, MeasuredItem::Text { category: Category::Images, .. })
}

/// Multiplies the report-token counts of `item` by `r`, rounded.
fn scale_item(item: &mut MeasuredItem, r: f64) {
    match item {
        MeasuredItem::Text { measure, .. } => measure.set_tokens(scaled(measure.tokens, r)),
        MeasuredItem::ToolCall { measure, name_measure, .. } => {
            measure.set_tokens(scaled(measure.tokens, r));
            name_measure.set_tokens(scaled(name_measure.tokens, r));
        }
        MeasuredItem::ToolResult(sizes, _) => {
            sizes.text.set_tokens(scaled(sizes.text.tokens, r));
            sizes.summary.set_tokens(scaled(sizes.summary.tokens, r));
            if let Whole::Joined { newline_tokens, .. } = &mut sizes.whole {
                *newline_tokens = scaled((*newline_tokens).into(), r).min(255) as u8;
            }
        }
        MeasuredItem::Compaction { summary: Some(s) } => s.set_tokens(scaled(s.tokens, r)),
        MeasuredItem::Cleared { placeholder, .. } => placeholder.set_tokens(scaled(placeholder.tokens, r)),
        MeasuredItem::Compaction { summary: None } | MeasuredItem::Request { .. } => {}
    }
}

/// Adds the overhead as [`Category::Unrecorded`] items, `overheads[s]` (else `fallback`) at the
/// start of each segment `s` ([`positions`]: at the start and after the compactions before a
/// request), and the growth, `round(growth[s]·step)` in all by the request at `step` of its
/// segment `s`, as one [`grown`] item before each request; nothing of 0.
fn add_unseen(measured: &mut MeasuredConversation, overheads: &[Tokens], fallback: Tokens, growth: &[f64]) {
    let at = |segment: usize| overheads.get(segment).copied().unwrap_or(fallback);
    let growth_of = |segment: usize| growth.get(segment).copied().unwrap_or(0.0);
    let push = |items: &mut Vec<MeasuredItem>, tokens: Tokens| {
        if tokens > 0 {
            items.push(unrecorded(tokens));
        }
    };
    let old = std::mem::take(&mut measured.items);
    let mut items = Vec::with_capacity(old.len() + old.len() / 4 + 1);
    push(&mut items, at(0));
    // The segment and step of the last request, whether one came, a compaction since it.
    let (mut segment, mut step, mut seen, mut compacted, mut added) = (0, 0, false, false, 0);
    for item in old {
        match &item {
            MeasuredItem::Compaction { .. } => {
                items.push(item);
                push(&mut items, at(if seen { segment + 1 } else { 0 }));
                compacted = true;
                continue;
            }
            MeasuredItem::Request { .. } => {
                if seen && compacted {
                    (segment, step, added) = (segment + 1, 0, 0);
                } else if seen {
                    step += 1;
                }
                (seen, compacted) = (true, false);
                let total = (growth_of(segment) * step as f64).round() as Tokens;
                if total > added {
                    items.push(grown(total - added));
                }
                added = added.max(total);
            }
            _ => {}
        }
        items.push(item);
    }
    measured.items = items;
}

/// The overhead a compaction the replay makes (a policy's, or the agent's trigger when the log's
/// own are dropped) restarts the context with, of a conversation fitted with `overheads` per
/// segment: the overhead the log showed after its first compaction where it recorded one (what
/// the agent sends after compacting: in `session-624a4a58` about 30 k against 53 k before it),
/// else the first segment's. Its growth is summarised away, as after a compaction the log
/// recorded. `None` where nothing was fitted: the compaction keeps the unrecorded overhead.
fn restart_overhead(overheads: &[Tokens]) -> Option<Tokens> {
    overheads.get(1).or(overheads.first()).copied()
}

/// The growth of `tokens` before a request: a [`Category::Framing`] item (structure and reminders
/// spread over the messages, no message of its own: no OpenHands event, and summarised away by a
/// compaction like the framing per item).
fn grown(tokens: Tokens) -> MeasuredItem {
    MeasuredItem::Text {
        category: Category::Framing,
        measure: crate::measure::overhead_measure(tokens),
        turn_start: false,
        turn_scoped: false,
    }
}

/// An item of `tokens` the log does not hold.
fn unrecorded(tokens: Tokens) -> MeasuredItem {
    MeasuredItem::Text {
        category: Category::Unrecorded,
        measure: crate::measure::overhead_measure(tokens),
        turn_start: false,
        turn_scoped: false,
    }
}

/// Each recorded request predicted with the model fitted without it (`None` where the request has
/// no recorded size, or no other request does).
pub fn leave_one_out(samples: &[Sample], inputs: &Inputs) -> Vec<Option<f64>> {
    let pos = positions(samples);
    (0..samples.len())
        .map(|i| {
            samples[i].recorded?;
            Some(fit(samples, inputs, Some(i))?.predict(&samples[i], pos[i]))
        })
        .collect()
}

/// `(recorded, predicted)` for each recorded request of a conversation already calibrated
/// ([`apply`]), each predicted by the calibration refitted without it; none below `min` recorded
/// requests or where nothing was fitted ([`Method::Default`], [`Method::Override`],
/// [`Method::None`]). Its counts are already provider tokens, so the refitted ratio is relative to
/// the applied one (1 when exact): the weighted median scales with the counts, so the prediction
/// is [`leave_one_out`]'s on the uncalibrated counts but for rounding and which appends pass
/// [`MIN_DELTA`].
pub fn held_out(measured: &MeasuredConversation, min: usize) -> Vec<(Tokens, f64)> {
    let (exact, kinds) = match measured.calibration.method {
        Method::Exact => (true, false),
        Method::Ratio => (false, false),
        Method::Kinds => (false, true),
        Method::Default | Method::Override | Method::None => return Vec::new(),
    };
    let samples = if by_kind(&measured.calibration) { samples_by_kind(measured) } else { samples(measured) };
    if samples.iter().filter(|s| s.recorded.is_some()).count() < min {
        return Vec::new();
    }
    let predicted = leave_one_out(&samples, &Inputs { exact, default_ratio: 1.0, kinds });
    samples.iter().zip(predicted).filter_map(|(s, p)| s.recorded.zip(p)).collect()
}

#[cfg(test)]
mod tests;
