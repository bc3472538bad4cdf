//! Reconcile: how far the replayed context of each request is from the prompt size the provider
//! recorded for it.
//!
//! **What is replayed (decision).** Policy `none` on the outputs as recorded: every item the
//! conversation holds is sent, and each tool result counts as the text the agent recorded and sent
//! ([`ResultSizes::output`](crate::measure::ResultSizes::output)) — not the seed's split. Splitting an output sends
//! `summary + content`, which is more text than the agent sent, and no threshold is involved here
//! at all (a threshold "large enough" would still leave tool-split outputs split, and would make
//! the comparison depend on a number that has nothing to do with what was billed). No record-time
//! transform is applied. So the replayed context of a request is exactly the sum of the measured
//! texts before it since the last compaction, which is what the replay engine reports for policy
//! `none` whenever nothing is split (a unit test checks the two agree).
//!
//! **The fit.** Per conversation, over the requests with a recorded prompt size,
//! `recorded ≈ a + b·replayed` by ordinary least squares. `a` is what the log does not record (the
//! system prompt and tool schemas, message framing); `b` the ratio between the chosen tokenizer and
//! the provider's (1 when they are the same and the replay is complete). With one point, `b` is
//! fixed at 1 and `a` is the gap; with no spread in `replayed`, likewise with `a` the mean gap. R²
//! is `1 - SS_res/SS_tot` (absent when the recorded sizes do not vary). The per-request error after
//! the fit is `recorded - (a + b·replayed)`; its absolute value is reported in tokens and relative
//! to `recorded`, as median, p90 and max (nearest-rank percentiles).
//!
//! Where a conversation records only a total ([`Conversation::recorded_total`]) the totals are
//! compared instead: replayed sum over requests beside the recorded sum.
//!
//! Token counts are only exact when the provider's tokenizer is the one used: Claude's and Gemini's
//! tokenizers are not public, so for those formats o200k is a proxy and the report says so.
//! Pure: no I/O, no printing.

use serde::{Deserialize, Serialize};

pub use crate::calibrate::provider_of;
use crate::calibrate::{self, Calibration, Method, Sample};
use crate::measure::{Category, MeasuredConversation, MeasuredItem};
use crate::model::{Conversation, Item, Tokens};
use crate::time::format_rfc3339;
use crate::tokens::Tokenizer;

/// What the replayed context of one request is made of, in the report's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SentParts {
    /// System prompt and developer instructions the log records.
    pub system: Tokens,
    /// User text, injected text and compaction summaries.
    pub user: Tokens,
    /// Assistant text.
    pub assistant: Tokens,
    /// Readable reasoning sent back.
    pub thinking: Tokens,
    /// Reasoning re-sent without its text, from the recorded reasoning tokens; dropped at the
    /// next human turn.
    pub hidden_reasoning: Tokens,
    /// Content the provider added server-side (web search results), from the usage step it caused.
    pub server_side: Tokens,
    /// Tool call names and arguments.
    pub tool_calls: Tokens,
    /// Tool outputs as recorded.
    pub tool_outputs: Tokens,
    /// Images in the context, counted.
    pub images: u64,
    /// Tokens of the images the importer could size (docs/unseen-context.md).
    pub image_tokens: Tokens,
}

impl SentParts {
    /// Tokens of the whole context.
    pub fn total(&self) -> Tokens {
        self.system
            + self.user
            + self.assistant
            + self.thinking
            + self.hidden_reasoning
            + self.server_side
            + self.tool_calls
            + self.tool_outputs
            + self.image_tokens
    }

    fn add(&mut self, category: Category, tokens: Tokens) {
        let slot = match category {
            // Reconcile measures without `--overhead`; were it given, it would be system text.
            Category::Unrecorded | Category::Framing | Category::System => &mut self.system,
            Category::User => &mut self.user,
            Category::Assistant => &mut self.assistant,
            Category::Thinking => &mut self.thinking,
            Category::HiddenReasoning => &mut self.hidden_reasoning,
            Category::ServerSide => &mut self.server_side,
            Category::Images => &mut self.image_tokens,
            Category::ToolCalls => &mut self.tool_calls,
            Category::ToolSummaries | Category::ToolContents | Category::Placeholders => {
                &mut self.tool_outputs
            }
        };
        *slot += tokens;
    }
}

/// One request: its replayed context beside its recorded prompt size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestFit {
    /// The input path.
    pub trace: String,
    /// Conversation id within the file.
    pub conversation: String,
    /// 0-based request index in the conversation.
    pub request: usize,
    /// Provider id of the response, when recorded.
    pub id: Option<String>,
    /// RFC 3339 time of the request, when recorded.
    pub timestamp: Option<String>,
    /// Replayed context in the report's tokenizer.
    pub replayed: Tokens,
    /// Prompt size the provider recorded, if any.
    pub recorded: Option<Tokens>,
    /// `a + b·replayed`, when the conversation has a fit.
    pub fitted: Option<f64>,
    /// `recorded - fitted` (positive: the provider saw more than the fit explains).
    pub error: Option<f64>,
    /// `|error| / recorded`.
    pub relative_error: Option<f64>,
    /// The calibrated prediction of the recorded size, fitted without this request
    /// ([`crate::calibrate::leave_one_out`]); absent where the conversation has fewer than
    /// [`MIN_CALIBRATED`] recorded requests.
    pub calibrated: Option<f64>,
    /// What the replayed context is made of.
    pub parts: SentParts,
}

/// Summary of the per-request errors after the fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorStats {
    /// Median absolute error, tokens.
    pub median_abs: f64,
    /// 90th percentile absolute error, tokens.
    pub p90_abs: f64,
    /// Largest absolute error, tokens.
    pub max_abs: f64,
    /// Median relative error (fraction of the recorded size).
    pub median_rel: f64,
    /// 90th percentile relative error.
    pub p90_rel: f64,
    /// Largest relative error.
    pub max_rel: f64,
}

/// Fewest recorded requests whose calibrated error is reported (with fewer, each prediction
/// would rest on one or two other requests).
pub const MIN_CALIBRATED: usize = crate::calibrate::MIN_RECORDED;

/// The calibrated prediction's own error, with no fitted slope: each recorded request predicted
/// by the calibration ([`crate::calibrate`]) fitted without it. The quality gate.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Calibrated {
    /// Requests predicted.
    pub requests: usize,
    /// Median of `|recorded - predicted| / recorded`.
    pub median_rel: Option<f64>,
    /// 90th percentile (nearest rank).
    pub p90_rel: Option<f64>,
    /// Largest.
    pub max_rel: Option<f64>,
    /// Recorded total over predicted total.
    pub total_ratio: Option<f64>,
    /// Why the fields are null, when they are.
    pub reason: Option<String>,
}

impl Calibrated {
    /// The error of `(recorded, predicted)` pairs; null fields with `reason` below
    /// [`MIN_CALIBRATED`] pairs.
    pub fn from_pairs(pairs: &[(Tokens, f64)], reason: impl FnOnce() -> String) -> Calibrated {
        if pairs.len() < MIN_CALIBRATED {
            return Calibrated { requests: pairs.len(), reason: Some(reason()), ..Default::default() };
        }
        let mut rel: Vec<f64> =
            pairs.iter().filter(|p| p.0 > 0).map(|&(y, p)| (y as f64 - p).abs() / y as f64).collect();
        rel.sort_by(f64::total_cmp);
        let recorded: f64 = pairs.iter().map(|p| p.0 as f64).sum();
        let predicted: f64 = pairs.iter().map(|p| p.1).sum();
        let some = |v: f64| (!rel.is_empty()).then_some(v);
        Calibrated {
            requests: pairs.len(),
            median_rel: some(nearest_rank(&rel, 0.5)),
            p90_rel: some(nearest_rank(&rel, 0.9)),
            max_rel: some(nearest_rank(&rel, 1.0)),
            total_ratio: (predicted > 0.0).then(|| recorded / predicted),
            reason: None,
        }
    }
}

/// What a conversation's recorded usage allows comparing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// Per-request prompt sizes: a fit.
    PerRequest,
    /// Only a total over the conversation: totals compared.
    Totals,
    /// Nothing recorded.
    #[default]
    None,
}

/// One conversation reconciled.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConversationFit {
    /// The input path.
    pub trace: String,
    /// Conversation id within the file.
    pub conversation: String,
    /// Format that read the file.
    pub format: String,
    /// Provider whose usage the format records, as far as the format tells.
    pub provider: String,
    /// Whether the report's tokenizer is the provider's (counts exact, not a proxy).
    pub tokenizer_exact: bool,
    /// Requests replayed.
    pub requests: usize,
    /// Of those, with a recorded prompt size.
    pub recorded_requests: usize,
    /// What was compared.
    pub basis: Basis,
    /// Intercept: tokens the log does not record.
    pub a: Option<f64>,
    /// Slope: recorded tokens per replayed token.
    pub b: Option<f64>,
    /// Coefficient of determination of the fit.
    pub r2: Option<f64>,
    /// Errors after the fit.
    pub error: Option<ErrorStats>,
    /// Replayed context summed over the requests compared (all requests for a totals basis).
    pub replayed_total: Tokens,
    /// Recorded prompt sizes summed over the same requests (or the recorded total).
    pub recorded_total: Option<Tokens>,
    /// Calls the recorded total covers (totals basis).
    pub recorded_calls: Option<u64>,
    /// `recorded_total / replayed_total`.
    pub total_ratio: Option<f64>,
    /// The calibration every replay of this conversation applies (fitted on all its requests).
    pub calibration: Calibration,
    /// The calibrated prediction's error, each request left out of its own fit.
    pub calibrated: Calibrated,
    /// Every request (only when asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests_detail: Option<Vec<RequestFit>>,
}

/// The per-request errors after the fit pooled over every conversation of one format.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatSummary {
    /// Format name.
    pub format: String,
    /// Conversations of that format.
    pub conversations: usize,
    /// Conversations with a per-request fit.
    pub fitted_conversations: usize,
    /// Requests with a recorded prompt size (the pooled sample).
    pub recorded_requests: usize,
    /// Errors over that sample (each request against its own conversation's fit).
    pub error: Option<ErrorStats>,
    /// The calibrated error pooled over the format's conversations with enough requests.
    pub calibrated: Calibrated,
}

/// Pools the fitted requests of `rows` by format, in order of first appearance in `fits`.
pub fn by_format(fits: &[ConversationFit], rows: &[RequestFit]) -> Vec<FormatSummary> {
    let mut out: Vec<FormatSummary> = Vec::new();
    let mut samples: Vec<(Vec<f64>, Vec<f64>)> = Vec::new();
    let mut predicted: Vec<Vec<(Tokens, f64)>> = Vec::new();
    let mut format_of = std::collections::BTreeMap::new();
    for f in fits {
        let i = match out.iter().position(|s| s.format == f.format) {
            Some(i) => i,
            None => {
                out.push(FormatSummary { format: f.format.clone(), ..Default::default() });
                samples.push((Vec::new(), Vec::new()));
                predicted.push(Vec::new());
                out.len() - 1
            }
        };
        out[i].conversations += 1;
        out[i].fitted_conversations += usize::from(f.basis == Basis::PerRequest);
        format_of.insert((f.trace.as_str(), f.conversation.as_str()), i);
    }
    for r in rows {
        if let (Some(i), Some(y), Some(p)) =
            (format_of.get(&(r.trace.as_str(), r.conversation.as_str())), r.recorded, r.calibrated)
        {
            predicted[*i].push((y, p));
        }
        let (Some(i), Some(e)) = (format_of.get(&(r.trace.as_str(), r.conversation.as_str())), r.error)
        else {
            continue;
        };
        out[*i].recorded_requests += 1;
        samples[*i].0.push(e.abs());
        samples[*i].1.extend(r.relative_error);
    }
    for ((s, (abs, rel)), pairs) in out.iter_mut().zip(samples).zip(predicted) {
        s.error = stats(abs, rel);
        s.calibrated = Calibrated::from_pairs(&pairs, || {
            format!("fewer than {MIN_CALIBRATED} requests in conversations with {MIN_CALIBRATED} or more")
        });
    }
    out
}

/// The document `reconcile --format json` writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReconcileReport {
    /// Tokenizer of every replayed count.
    pub tokenizer: String,
    /// One entry per conversation, in input order.
    pub conversations: Vec<ConversationFit>,
    /// Errors pooled per format.
    pub formats: Vec<FormatSummary>,
    /// The requests with the largest absolute error after the fit, over all conversations.
    pub worst: Vec<RequestFit>,
    /// Plain statements about what the numbers can and cannot show (proxy tokenizers).
    pub notes: Vec<String>,
    /// Every file found, in input order ([`crate::result::Envelope::inputs`]).
    #[serde(default)]
    pub inputs: Vec<crate::result::InputFile>,
    /// The options that changed the numbers ([`crate::result::Envelope::settings`]).
    #[serde(default)]
    pub settings: crate::result::Settings,
    /// Files that could not be read, with the reason: each a [`crate::result::Problem`] in the JSON.
    #[serde(with = "crate::result::problem_lines")]
    pub errors: Vec<String>,
    /// Non-fatal problems, per file.
    pub warnings: Vec<String>,
}

/// The note the report prints about a provider and tokenizer, if any; under
/// [`Tokenizer::Provider`] it says how the conversation's calibration `method` counted it (a
/// fitted ratio, a default one, or o200k as is).
pub fn tokenizer_note(provider: &str, tokenizer: Tokenizer, method: Method) -> Option<String> {
    let t = tokenizer.name();
    let who = match provider {
        "Anthropic" | "Google" => format!("{provider}: the tokenizer is not public;"),
        _ => "provider not known:".to_owned(),
    };
    match (provider, tokenizer) {
        (_, Tokenizer::Estimate) => {
            Some("the len/4 estimate is not a tokenizer: b absorbs its error on every text".into())
        }
        ("OpenAI", Tokenizer::Provider) => None,
        (_, Tokenizer::Provider) => Some(match method {
            Method::Ratio | Method::Kinds | Method::Exact => format!(
                "{who} provider counts with o200k times a ratio fitted from the usage deltas (one per content kind where the appends allow: method kinds; else one: ratio)"
            ),
            Method::Default => format!(
                "{who} a log with fewer than {MIN_CALIBRATED} recorded prompt sizes is counted with o200k times a default ratio (method default: the agent's, else the provider's; docs/calibration.md), an estimate"
            ),
            Method::None | Method::Override => {
                format!(
                    "{who} with no usage to fit a ratio from and no default, provider counts with o200k as is (method none), a proxy"
                )
            }
        }),
        ("Anthropic", _) => Some(format!(
            "Anthropic: Claude's tokenizer is not public; {t} is a proxy, so b includes the ratio between the two"
        )),
        ("Google", _) => Some(format!(
            "Google: Gemini's tokenizer is not public; {t} is a proxy, so b includes the ratio between the two"
        )),
        ("OpenAI", Tokenizer::O200k) => None,
        ("OpenAI", _) => {
            Some(format!("OpenAI: current models (gpt-4o, gpt-5, o-series, Codex) use o200k; {t} is a proxy"))
        }
        _ => Some(format!("provider not known from the format: {t} may be a proxy")),
    }
}

/// The replayed context of every request of `conversation`, policy `none`, outputs as recorded.
/// `measured` must be `conversation` measured (item for item).
pub fn sent_contexts(
    trace: &str,
    conversation: &Conversation,
    measured: &MeasuredConversation,
) -> Vec<RequestFit> {
    let mut parts = SentParts::default();
    let mut out = Vec::new();
    // Turn-scoped readable reasoning, dropped with the hidden reasoning at the next human turn.
    let mut scoped_thinking = 0;
    let mut clearing = crate::measure::cleared::Clearing::default();
    for (item, m) in conversation.items.iter().zip(&measured.items) {
        let cleared = clearing.step(m);
        match (item, m) {
            (_, MeasuredItem::Text { category, measure, turn_start, turn_scoped }) => {
                if *turn_start {
                    // The hidden reasoning of earlier turns is no longer sent.
                    parts.hidden_reasoning = 0;
                    parts.thinking -= std::mem::take(&mut scoped_thinking);
                }
                if *turn_scoped && *category == Category::Thinking {
                    scoped_thinking += measure.tokens;
                }
                if let Item::User { images, .. } = item {
                    parts.images += u64::from(*images);
                }
                parts.add(*category, measure.tokens);
            }
            (_, MeasuredItem::ToolCall { measure, .. }) => parts.tool_calls += measure.tokens,
            (_, MeasuredItem::ToolResult(sizes, r)) => {
                parts.tool_outputs += sizes.output().tokens;
                parts.images += u64::from(r.images);
            }
            // Each result the agent cleared is sent as the placeholder; thinking cleared is not sent.
            (_, MeasuredItem::Cleared { placeholder, .. }) => {
                let removed: Tokens = cleared.iter().map(|c| c.1).sum();
                parts.tool_outputs = (parts.tool_outputs + placeholder.tokens * cleared.len() as Tokens)
                    .saturating_sub(removed);
                parts.thinking = parts.thinking.saturating_sub(clearing.thinking());
            }
            (_, MeasuredItem::Compaction { summary }) => {
                parts = SentParts::default();
                scoped_thinking = 0;
                parts.user += summary.map_or(0, |s| s.tokens);
            }
            (_, MeasuredItem::Request { id, timestamp, usage, .. }) => out.push(RequestFit {
                trace: trace.to_owned(),
                conversation: conversation.id.clone(),
                request: out.len(),
                id: id.clone(),
                timestamp: timestamp.map(format_rfc3339),
                replayed: parts.total(),
                recorded: usage.map(|u| u.input_tokens),
                fitted: None,
                error: None,
                relative_error: None,
                calibrated: None,
                parts,
            }),
        }
    }
    out
}

/// A least-squares line `y ≈ a + b·x`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// Intercept.
    pub a: f64,
    /// Slope.
    pub b: f64,
    /// Coefficient of determination, when `y` varies.
    pub r2: Option<f64>,
}

/// Fits `y ≈ a + b·x` by ordinary least squares (see the module doc for the degenerate cases).
pub fn fit(points: &[(f64, f64)]) -> Option<Line> {
    let n = points.len() as f64;
    if points.is_empty() {
        return None;
    }
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let (a, b) = if sxx > 0.0 { (mean_y - sxy / sxx * mean_x, sxy / sxx) } else { (mean_y - mean_x, 1.0) };
    let ss_tot: f64 = points.iter().map(|p| (p.1 - mean_y).powi(2)).sum();
    let ss_res: f64 = points.iter().map(|p| (p.1 - a - b * p.0).powi(2)).sum();
    let r2 = (ss_tot > 0.0 && points.len() > 1).then(|| 1.0 - ss_res / ss_tot);
    Some(Line { a, b, r2 })
}

/// The nearest-rank `p`-quantile (0 < p ≤ 1) of `sorted` (ascending); 0 for an empty list.
pub fn nearest_rank(sorted: &[f64], p: f64) -> f64 {
    let rank = (p * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()).wrapping_sub(1)).copied().unwrap_or(0.0)
}

/// Error statistics, or `None` when there is nothing to summarise. Relative errors need a recorded
/// size above zero: when every recorded prompt is 0 tokens (a broken recording) there are absolute
/// errors but no relative ones, and no summary either (found by fuzzing: indexing an empty list).
fn stats(mut abs: Vec<f64>, mut rel: Vec<f64>) -> Option<ErrorStats> {
    if abs.is_empty() || rel.is_empty() {
        return None;
    }
    abs.sort_by(f64::total_cmp);
    rel.sort_by(f64::total_cmp);
    Some(ErrorStats {
        median_abs: nearest_rank(&abs, 0.5),
        p90_abs: nearest_rank(&abs, 0.9),
        max_abs: nearest_rank(&abs, 1.0),
        median_rel: nearest_rank(&rel, 0.5),
        p90_rel: nearest_rank(&rel, 0.9),
        max_rel: nearest_rank(&rel, 1.0),
    })
}

/// Reconciles one conversation: its requests (from [`sent_contexts`]) are fitted in place, and
/// each is predicted by the calibration fitted without it (`samples`: [`crate::calibrate::samples`]
/// of the same measured conversation).
pub fn reconcile(
    trace: &str,
    format: &str,
    conversation: &Conversation,
    mut requests: Vec<RequestFit>,
    samples: &[Sample],
    tokenizer: Tokenizer,
) -> (ConversationFit, Vec<RequestFit>) {
    let model = calibrate::model_named(conversation);
    let mut c = ConversationFit {
        trace: trace.to_owned(),
        conversation: conversation.id.clone(),
        format: format.to_owned(),
        provider: calibrate::provider(format, model).0.to_owned(),
        tokenizer_exact: calibrate::exact_for(format, model, tokenizer),
        requests: requests.len(),
        ..Default::default()
    };
    let points: Vec<(f64, f64)> =
        requests.iter().filter_map(|r| r.recorded.map(|y| (r.replayed as f64, y as f64))).collect();
    c.recorded_requests = points.len();
    if let Some(line) = fit(&points) {
        c.basis = Basis::PerRequest;
        (c.a, c.b, c.r2) = (Some(line.a), Some(line.b), line.r2);
        let (mut abs, mut rel) = (Vec::new(), Vec::new());
        for r in requests.iter_mut() {
            let fitted = line.a + line.b * r.replayed as f64;
            r.fitted = Some(fitted);
            if let Some(y) = r.recorded {
                let error = y as f64 - fitted;
                r.error = Some(error);
                abs.push(error.abs());
                if y > 0 {
                    r.relative_error = Some(error.abs() / y as f64);
                    rel.push(error.abs() / y as f64);
                }
                c.replayed_total += r.replayed;
                *c.recorded_total.get_or_insert(0) += y;
            }
        }
        c.error = stats(abs, rel);
    } else if let Some(total) = conversation.recorded_total {
        c.basis = Basis::Totals;
        c.replayed_total = requests.iter().map(|r| r.replayed).sum();
        c.recorded_total = Some(total.input_tokens);
        c.recorded_calls = Some(total.calls);
    }
    if let (Some(recorded), true) = (c.recorded_total, c.replayed_total > 0) {
        c.total_ratio = Some(recorded as f64 / c.replayed_total as f64);
    }
    c.calibration = calibrate::from_samples(samples, format, model, tokenizer);
    let inputs = calibrate::fit_inputs(format, model, tokenizer);
    c.calibrated = calibrated(&mut requests, samples, inputs, c.basis);
    (c, requests)
}

/// The calibrated prediction of every request (fitted without it; inputs: [`calibrate::fit_inputs`]).
fn calibrated(
    requests: &mut [RequestFit],
    samples: &[Sample],
    inputs: calibrate::Inputs,
    basis: Basis,
) -> Calibrated {
    let recorded = samples.iter().filter(|s| s.recorded.is_some()).count();
    let mut pairs = Vec::new();
    if recorded >= MIN_CALIBRATED {
        let predictions = calibrate::leave_one_out(samples, &inputs);
        for (r, p) in requests.iter_mut().zip(predictions) {
            r.calibrated = p;
            pairs.extend(r.recorded.zip(p));
        }
    }
    Calibrated::from_pairs(&pairs, || match basis {
        Basis::Totals => "only a total is recorded, no prompt size per request".to_owned(),
        _ if recorded == 0 => "no recorded prompt size".to_owned(),
        _ => format!("{recorded} recorded request(s), fewer than {MIN_CALIBRATED}"),
    })
}

/// The `n` requests with the largest absolute error after the fit, largest first (ties: input
/// order).
pub fn worst(requests: &[RequestFit], n: usize) -> Vec<RequestFit> {
    let mut with_error: Vec<&RequestFit> = requests.iter().filter(|r| r.error.is_some()).collect();
    // Ties (many requests fit exactly) are broken by trace, conversation and request, so which
    // requests are listed does not depend on the order of the input files.
    with_error.sort_by(|x, y| {
        let (ex, ey) = (x.error.unwrap_or(0.0).abs(), y.error.unwrap_or(0.0).abs());
        ey.total_cmp(&ex)
            .then_with(|| (&x.trace, &x.conversation, x.request).cmp(&(&y.trace, &y.conversation, y.request)))
    });
    with_error.into_iter().take(n).cloned().collect()
}

#[cfg(test)]
mod tests;
