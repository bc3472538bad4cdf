//! Tables of the analyses (sweep, comparison, cost, calibration) and their rendering in every output
//! format, sharing the column model and renderers of the replay report so all outputs agree.
//!
//! A rendered analysis is a list of [`Section`]s (a title, an optional table, lines of text such as
//! the recommendation). Terminal and Markdown output show every section; CSV gives the first table
//! (the report writes each table to its own CSV file); JSON is the value the command gives: the
//! analysis struct verbatim with the keys every command writes beside it
//! ([`crate::result::Enveloped`]), and for `cost` the payoff of each policy ([`CostDocument`]).

use anyhow::Result;
use serde::Serialize;

use super::ExportFormat;
use super::columns::{Tabular, percent};
use crate::analysis::calibration::Calibration;
use crate::analysis::compare::{Comparison, EventRow, PolicyRow};
use crate::analysis::sweep::{Recommendation, Sweep, SweepRow, usd};

/// A titled part of an analysis output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Section {
    /// Title.
    pub title: String,
    /// Lines of text shown after the title.
    pub text: Vec<String>,
    /// The table, if any.
    pub table: Option<Tabular>,
}

/// A fraction as a percentage with one decimal.
pub fn pct(v: f64) -> String {
    percent(Some(v))
}

/// A cost in its unit: two decimals for small values (USD), none for token equivalents.
pub fn money(v: f64, unit: &str) -> String {
    if unit == "USD" { format!("{v:.4}") } else { format!("{v:.0}") }
}

/// `text` with its first letter in upper case, to follow a full stop.
pub fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// `n` and `noun`, with an `s` unless `n` is 1: "1 request", "3 requests".
pub fn count_of(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// What prices are per: "per 1 token (input-token equivalents)", "per 1000000 tokens (USD)".
pub fn price_unit(p: &crate::analysis::cost::Prices) -> String {
    if p.per_tokens == 1.0 {
        format!("per 1 token ({})", p.unit)
    } else {
        format!("per {} tokens ({})", p.per_tokens, p.unit)
    }
}

fn mark(threshold: usize, rec: Option<&Recommendation>) -> String {
    match rec {
        Some(r) if r.threshold == threshold && r.best_threshold == threshold => "recommended, best".into(),
        Some(r) if r.threshold == threshold => "recommended".into(),
        Some(r) if r.best_threshold == threshold => "best".into(),
        _ => String::new(),
    }
}

/// The columns of the table below, in order.
pub const SWEEP_HEADERS: [&str; 12] = [
    "threshold",
    "split_results",
    "split_share",
    "summary_tokens",
    "content_tokens",
    "overhead_tokens",
    "peak_context_tokens",
    "total_input_tokens",
    "savings",
    "cost_usd",
    "prune_events",
    "mark",
];

/// One row per threshold.
pub fn sweep_rows(rows: &[SweepRow], rec: Option<&Recommendation>) -> Tabular {
    Tabular {
        headers: SWEEP_HEADERS.to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                vec![
                    r.threshold.to_string(),
                    r.split_results.to_string(),
                    pct(r.split_share),
                    r.summary_tokens.to_string(),
                    r.content_tokens.to_string(),
                    r.overhead_tokens.to_string(),
                    r.peak_context_tokens.to_string(),
                    r.total_input_tokens.to_string(),
                    pct(r.savings),
                    r.cost_usd.map(|v| format!("{v:.4}")).unwrap_or_default(),
                    r.prune_events.to_string(),
                    mark(r.threshold, rec),
                ]
            })
            .collect(),
    }
}

/// The columns of the table below, in order.
pub const SWEEP_TOOL_HEADERS: [&str; 9] = [
    "tool",
    "results",
    "output_tokens",
    "output_share",
    "recommended_threshold",
    "tool_savings",
    "best_threshold",
    "best_tool_savings",
    "versus_overall",
];

/// One row per dominant tool: where its own recommendation lands.
pub fn sweep_tools(sweep: &Sweep) -> Tabular {
    let overall = sweep.recommendation.as_ref().map(|r| r.threshold);
    Tabular {
        headers: SWEEP_TOOL_HEADERS.to_vec(),
        rows: sweep
            .per_tool
            .iter()
            .map(|t| {
                let r = t.recommendation.as_ref();
                let moves = match (r.map(|r| r.threshold), overall) {
                    (Some(a), Some(b)) if a > b => "larger",
                    (Some(a), Some(b)) if a < b => "smaller",
                    (Some(_), Some(_)) => "same",
                    _ => "",
                };
                vec![
                    t.tool.clone(),
                    t.results.to_string(),
                    t.output_tokens.to_string(),
                    pct(t.output_share),
                    r.map(|r| r.threshold.to_string()).unwrap_or_default(),
                    r.map(|r| pct(r.savings - t.unsplit_savings)).unwrap_or_default(),
                    r.map(|r| r.best_threshold.to_string()).unwrap_or_default(),
                    r.map(|r| pct(r.best_savings - t.unsplit_savings)).unwrap_or_default(),
                    moves.to_owned(),
                ]
            })
            .collect(),
    }
}

/// How the sweep's `cost_usd` is priced, under its table.
pub const SWEEP_COST_NOTE: &str = "cost_usd: the whole bill in USD with the prompt cache, at each request's model price, as \
     recommend prices a pair (docs/analyses.md); the threshold is chosen by input tokens.";

/// The sweep as sections: the recommendation, the thresholds, the tools.
pub fn sweep_sections(sweep: &Sweep) -> Vec<Section> {
    let rec = sweep.recommendation.as_ref();
    let mut text = vec![format!(
        "{}, {}; baseline (`none`, nothing split): {} input tokens, {}, peak {}.",
        count_of(sweep.conversations, "conversation"),
        count_of(sweep.requests, "request"),
        sweep.baseline_total_tokens,
        usd(sweep.baseline_cost_usd),
        sweep.baseline_peak_tokens
    )];
    text.push(match rec {
        Some(r) => format!("Recommended SUMMARY_THRESHOLD: {} bytes. {}.", r.threshold, sentence(&r.reason)),
        None => "No recommendation: nothing to sweep.".into(),
    });
    text.push(SWEEP_COST_NOTE.into());
    vec![
        Section {
            title: format!("Threshold sweep under {}", sweep.policy),
            text,
            table: Some(sweep_rows(&sweep.rows, rec)),
        },
        Section {
            title: "Per tool (only that tool's threshold varies; the others stay at the recommendation)"
                .into(),
            text: vec![
                "tool_savings: input tokens saved by splitting this tool's outputs (share of the baseline); \
                 the recommendation keeps it within the tolerance of best_tool_savings."
                    .into(),
            ],
            table: Some(sweep_tools(sweep)),
        },
    ]
}

/// The columns of the table below, in order.
pub const COMPARE_HEADERS: [&str; 14] = [
    "policy",
    "requests",
    "peak_context_tokens",
    "total_input_tokens",
    "savings",
    "prune_events",
    "over_window",
    "cost",
    "cost_change",
    "cost_usd",
    "reuse_share",
    "reused_results",
    "reused_tokens",
    "note",
];

/// One row per policy: tokens, window, cost.
pub fn compare_policies(c: &Comparison) -> Tabular {
    let unit = &c.cache.prices.unit;
    let t = Tabular {
        headers: COMPARE_HEADERS.to_vec(),
        rows: c
            .policies
            .iter()
            .map(|p| {
                vec![
                    p.policy.clone(),
                    p.requests.to_string(),
                    p.peak_context_tokens.to_string(),
                    p.total_input_tokens.to_string(),
                    pct(p.savings),
                    p.prune_events.to_string(),
                    p.over_window.to_string(),
                    money(p.cost.cost, unit),
                    pct(p.cost_change),
                    format!("{:.4}", p.cost.cost_usd),
                    pct(p.reuse_share),
                    p.reused_results.to_string(),
                    p.reused_tokens.to_string(),
                    policy_note(p),
                ]
            })
            .collect(),
    };
    with_compactions(t, c)
}

/// `t`, one row per policy of `c`, with the compaction columns when a policy compacted.
fn with_compactions(t: Tabular, c: &Comparison) -> Tabular {
    let totals: Vec<_> = c.policies.iter().map(|p| p.compaction).collect();
    super::compaction::append(t, &totals)
}

/// What a policy's row says besides its numbers: that it saves tokens but costs more, or that it
/// never fired and why ([`PolicyRow::never_fired_reason`]: its trigger beside the most it
/// measured, so a 0.0% reads as a trigger above this input's contexts, not as a failure to prune).
fn policy_note(p: &PolicyRow) -> String {
    if p.saves_tokens_costs_more {
        "saves tokens, costs more".into()
    } else if let Some(reason) = &p.never_fired_reason {
        format!("never fired: {reason}")
    } else {
        String::new()
    }
}

/// The columns of the table below, in order.
pub const COST_HEADERS: [&str; 14] = [
    "policy",
    "cost",
    "cost_change",
    "cost_usd",
    "output_tokens",
    "output_cost_usd",
    "cold_requests",
    "read_tokens",
    "write_tokens",
    "rewritten_tokens",
    "freed_tokens",
    "prune_events",
    "events_paying_off",
    "note",
];

/// One row per policy: where the cost goes.
pub fn cost_policies(c: &Comparison) -> Tabular {
    let unit = &c.cache.prices.unit;
    let t = Tabular {
        headers: COST_HEADERS.to_vec(),
        rows: c
            .policies
            .iter()
            .zip(payoff(c))
            .map(|(p, payoff)| {
                let paying = payoff.events_paying_off;
                vec![
                    p.policy.clone(),
                    money(p.cost.cost, unit),
                    pct(p.cost_change),
                    format!("{:.4}", p.cost.cost_usd),
                    p.cost.output_tokens.to_string(),
                    format!("{:.4}", p.cost.output_cost_usd),
                    p.cost.cold_requests.to_string(),
                    p.cost.read_tokens.to_string(),
                    p.cost.write_tokens.to_string(),
                    p.cost.rewritten_tokens.to_string(),
                    p.cost.freed_tokens.to_string(),
                    p.cost.prune_events.to_string(),
                    paying.to_string(),
                    policy_note(p),
                ]
            })
            .collect(),
    };
    with_compactions(t, c)
}

/// The columns of [`cost_events`].
pub const COST_EVENT_HEADERS: [&str; 12] = [
    "trace",
    "conversation",
    "policy",
    "request",
    "changed_results",
    "freed_tokens",
    "rewritten_tokens",
    "cache",
    "rewrite_cost",
    "break_even_requests",
    "later_requests",
    "pays_off",
];

/// One row per prune event.
pub fn cost_events(events: &[EventRow], unit: &str) -> Tabular {
    Tabular {
        headers: COST_EVENT_HEADERS.to_vec(),
        rows: events.iter().map(|e| cost_event_cells(e, unit).to_vec()).collect(),
    }
}

/// The cells of one row of [`cost_events`].
fn cost_event_cells(e: &EventRow, unit: &str) -> [String; 12] {
    let v = &e.event;
    [
        e.trace.clone(),
        e.conversation.clone(),
        e.policy.clone(),
        v.request.to_string(),
        v.changed_results.to_string(),
        v.freed_tokens.to_string(),
        v.rewritten_tokens.to_string(),
        if v.cold { "cold".into() } else { "warm".into() },
        money(v.rewrite_cost, unit),
        v.break_even_requests.map(|b| format!("{b:.1}")).unwrap_or_default(),
        v.later_requests.to_string(),
        if v.pays_off() { "yes".into() } else { "no".into() },
    ]
}

/// [`cost_events`] as CSV (the bytes of [`super::csv::render_tabular`] of it), written to `out`
/// one event at a time: a report of a large corpus lists every prune event (113,469 for the
/// generated 1 GB corpus) without holding their cells or the file.
pub fn write_cost_events_csv(events: &[EventRow], unit: &str, out: impl std::io::Write) -> csv::Result<()> {
    let mut w = super::csv::Writer::from_writer(out);
    w.write_record(COST_EVENT_HEADERS)?;
    for e in events {
        w.write_record(cost_event_cells(e, unit))?;
    }
    w.flush()?;
    Ok(())
}

fn cache_line(c: &Comparison) -> String {
    let p = &c.cache.prices;
    format!(
        "Prices `{}`: write {}, read {} {}; cache TTL {}; threshold {} bytes; window {} tokens.",
        p.name,
        p.write,
        p.read,
        price_unit(p),
        crate::analysis::cost::format_ttl(c.cache.ttl_ms),
        c.threshold,
        c.window
    )
}

/// The comparison as sections.
pub fn compare_sections(c: &Comparison) -> Vec<Section> {
    let mut text = vec![cache_line(c)];
    text.extend(super::bill::usd_lines(c));
    text.extend([
        format!(
            "savings and cost_change are against the sessions as recorded (`none`, nothing split: {} input tokens, cost {}), the baseline of sweep and recommend too; `none` at {} bytes shows what the split alone costs.",
            c.baseline_input_tokens,
            money(c.baseline_cost, &c.cache.prices.unit),
            c.threshold
        ),
    ]);
    for p in c.policies.iter().filter(|p| p.saves_tokens_costs_more) {
        let why = p.why_it_costs_more();
        text.push(format!(
            "{} saves {} of input tokens but costs {} more than the sessions as recorded: {why}.",
            p.policy,
            pct(p.savings),
            pct(p.cost_change)
        ));
    }
    vec![Section { title: "Policies side by side".into(), text, table: Some(compare_policies(c)) }]
}

/// The cost analysis as sections: per policy, then per prune event.
pub fn cost_sections(c: &Comparison) -> Vec<Section> {
    vec![cost_policy_section(c), cost_events_section(&c.events, &c.cache.prices.unit)]
}

/// The first of [`cost_sections`]: cost per policy.
pub fn cost_policy_section(c: &Comparison) -> Section {
    Section {
        title: "Cache-aware cost per policy".into(),
        text: std::iter::once(cache_line(c)).chain(super::bill::usd_lines(c)).collect(),
        table: Some(cost_policies(c)),
    }
}

/// The title of the second of [`cost_sections`].
const COST_EVENTS_TITLE: &str = "Prune events: tokens freed versus cached tokens written again";

/// The second of [`cost_sections`], of any list of events.
pub fn cost_events_section(events: &[EventRow], unit: &str) -> Section {
    Section { title: COST_EVENTS_TITLE.into(), text: Vec::new(), table: Some(cost_events(events, unit)) }
}

/// The columns of the table below, in order.
pub const CALIBRATION_HEADERS: [&str; 11] = [
    "estimator",
    "group",
    "key",
    "results",
    "bytes",
    "tokens",
    "estimate",
    "error",
    "bytes_per_token",
    "mean_abs_error",
    "calibrated_mean_abs_error",
];

/// Every calibration row.
pub fn calibration_rows(c: &Calibration) -> Tabular {
    Tabular {
        headers: CALIBRATION_HEADERS.to_vec(),
        rows: c
            .rows
            .iter()
            .map(|r| {
                // With no real token to set them against, the ratios are not 0% off: they are
                // unknown, and an empty cell says so (JSON keeps its numbers, 0 with `tokens` 0).
                let known = r.tokens > 0;
                let ratio = |v: f64| if known { pct(v) } else { String::new() };
                vec![
                    r.estimator.clone(),
                    r.group.clone(),
                    r.key.clone(),
                    r.results.to_string(),
                    r.bytes.to_string(),
                    r.tokens.to_string(),
                    format!("{:.0}", r.estimate),
                    ratio(r.error),
                    if known { format!("{:.2}", r.bytes_per_token) } else { String::new() },
                    ratio(r.mean_abs_error),
                    ratio(r.calibrated_mean_abs_error),
                ]
            })
            .collect(),
    }
}

/// The calibration as sections.
pub fn calibration_sections(c: &Calibration) -> Vec<Section> {
    let mut text = vec![
        "error < 0: the estimate under-counts; bytes_per_token: the divisor that makes a bytes-based \
         estimate right; calibrated_mean_abs_error: the per-output error left after that fix; empty: \
         no tokens to compare with."
            .to_owned(),
    ];
    if c.is_against_estimate() {
        text.push(
            "With `--tokenizer estimate` the reference is len/4 itself, not real tokens: each row compares \
             an estimator with len/4 (`--tokenizer o200k` or `cl100k` measures the real error)."
                .into(),
        );
    }
    text.extend(c.scaling_note());
    vec![Section {
        title: format!("Estimate versus real ({}), per tool and per content kind", c.reference()),
        text,
        table: Some(calibration_rows(c)),
    }]
}

/// Writes an analysis to `output` in `format`: JSON is serialised straight into the output (a
/// comparison lists every prune event, 61 MB for the generated 1 GB corpus), and `sections` are
/// built only for the other formats, whose parts (a title, lines, a table) are written one after
/// the other rather than joined first; the bytes are those of [`render`].
pub fn write(
    output: &super::Output,
    format: ExportFormat,
    sections: impl FnOnce() -> Vec<Section>,
    value: &impl Serialize,
) -> Result<()> {
    match format {
        ExportFormat::Json => output.write_json(value, b"\n"),
        ExportFormat::Csv => output.write(&render(format, &sections(), value)?),
        ExportFormat::Table(_) | ExportFormat::Markdown => {
            let mut out = output.stream()?;
            write_sections(format, &sections(), &mut out)?;
            out.finish()
        }
    }
}

/// Renders sections (or, for JSON, `value`) in `format`.
pub fn render(format: ExportFormat, sections: &[Section], value: &impl Serialize) -> Result<Vec<u8>> {
    match format {
        ExportFormat::Json => {
            let mut out = serde_json::to_vec_pretty(value)?;
            out.push(b'\n');
            Ok(out)
        }
        ExportFormat::Csv => match sections.iter().find_map(|s| s.table.as_ref()) {
            Some(t) => super::csv::render_tabular(t),
            None => Ok(Vec::new()),
        },
        ExportFormat::Table(_) | ExportFormat::Markdown => {
            let mut out = Vec::new();
            write_sections(format, sections, &mut out)?;
            Ok(out)
        }
    }
}

/// The terminal or Markdown rendering of `sections`, written part by part to `out`.
fn write_sections(format: ExportFormat, sections: &[Section], out: &mut dyn std::io::Write) -> Result<()> {
    for (i, s) in sections.iter().enumerate() {
        let table = s.table.as_ref().map(|t| (&t.headers[..], || t.rows.iter()));
        write_section(format, i == 0, &s.title, &s.text, table, out)?;
    }
    Ok(())
}

/// One section of [`write_sections`]: its title, lines and table, the table's rows made on demand
/// (walked twice: sized, then drawn), so a table of every prune event holds no cells. A fitted
/// terminal table has its title and lines wrapped at its width too.
fn write_section<R, I>(
    format: ExportFormat,
    first: bool,
    title: &str,
    text: &[String],
    table: Option<(&[&'static str], impl Fn() -> I)>,
    out: &mut dyn std::io::Write,
) -> Result<()>
where
    R: AsRef<[String]>,
    I: Iterator<Item = R>,
{
    if !first {
        out.write_all(b"\n")?;
    }
    let ExportFormat::Table(fit) = format else {
        write!(out, "## {title}\n\n")?;
        for line in text {
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n\n")?;
        }
        if let Some((headers, rows)) = table {
            super::markdown::write_rows(headers, rows, out)?;
        }
        return Ok(());
    };
    out.write_all(super::table::wrapped(title, fit).as_bytes())?;
    for line in text {
        out.write_all(super::table::wrapped(line, fit).as_bytes())?;
    }
    if let Some((headers, rows)) = table {
        super::table::write_fitted(headers, rows, fit, out)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// What `cost` shows of each policy beside the comparison: how many of its prune events recover
/// the cached tokens they force to be written again ([`crate::analysis::cost::PruneEvent::pays_off`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Payoff {
    /// The policy spec.
    pub policy: String,
    /// Requests before which the policy changed the context.
    pub prune_events: usize,
    /// Of them, those whose later requests recover their rewrite cost.
    pub events_paying_off: usize,
}

/// The document `cost --format json` writes: the comparison `compare` writes, and the payoff of
/// each policy's prune events, which `cost` shows and `compare` does not.
#[derive(Debug, Serialize)]
pub struct CostDocument<'a> {
    /// The comparison.
    #[serde(flatten)]
    pub comparison: &'a Comparison,
    /// One entry per policy, in the comparison's order.
    pub payoff: Vec<Payoff>,
}

/// The [`Payoff`] of every policy of `c`.
pub fn payoff(c: &Comparison) -> Vec<Payoff> {
    c.policies
        .iter()
        .map(|p| Payoff {
            policy: p.policy.clone(),
            prune_events: p.cost.prune_events,
            events_paying_off: c.events.iter().filter(|e| e.policy == p.policy && e.event.pays_off()).count(),
        })
        .collect()
}

/// `cost` written to `output` in `format`: [`write()`] of [`cost_sections`], except that the
/// terminal table and Markdown draw the prune events from `c` one row at a time instead of as a
/// table of cells (113,469 events for the generated 1 GB corpus); the same bytes. JSON is the
/// [`CostDocument`] with `envelope` beside it. `settings_lines` follow the prices line in the
/// terminal and Markdown text (the command's, such as the harness's compaction).
pub fn write_cost(
    output: &super::Output,
    format: ExportFormat,
    c: &Comparison,
    envelope: crate::result::Envelope,
    settings_lines: &[String],
) -> Result<()> {
    match format {
        ExportFormat::Json => {
            let result = CostDocument { comparison: c, payoff: payoff(c) };
            write(output, format, Vec::new, &crate::result::Enveloped { result, envelope })
        }
        ExportFormat::Csv => write(output, format, || cost_sections(c), c),
        ExportFormat::Table(_) | ExportFormat::Markdown => {
            let mut out = output.stream()?;
            let mut policies = cost_policy_section(c);
            policies.text.splice(1..1, settings_lines.iter().cloned());
            write_sections(format, &[policies], &mut out)?;
            let unit = &c.cache.prices.unit;
            let rows = || c.events.iter().map(|e| cost_event_cells(e, unit));
            write_section(
                format,
                false,
                COST_EVENTS_TITLE,
                &[],
                Some((&COST_EVENT_HEADERS[..], rows)),
                &mut out,
            )?;
            if !c.compaction_events.is_empty() {
                let t = super::compaction::events(&c.compaction_events, unit);
                let rows = || t.rows.iter();
                let title = super::compaction::EVENTS_TITLE;
                write_section(format, false, title, &[], Some((&t.headers[..], rows)), &mut out)?;
            }
            out.finish()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::calibration::CalibrationRow;
    use crate::analysis::cost::{Prices, PruneEvent};

    #[test]
    fn a_reason_after_a_full_stop_starts_with_a_capital() {
        assert_eq!(sentence("no threshold saves input tokens"), "No threshold saves input tokens");
        assert_eq!(sentence("1024 bytes saves"), "1024 bytes saves");
        assert_eq!(sentence(""), "");
    }

    #[test]
    fn counts_take_a_plural_except_for_one() {
        assert_eq!(count_of(1, "request"), "1 request");
        assert_eq!(count_of(0, "request"), "0 requests");
        assert_eq!(count_of(2, "conversation"), "2 conversations");
    }

    #[test]
    fn prices_are_per_one_token_or_per_many_tokens() {
        assert_eq!(price_unit(&Prices::anthropic()), "per 1 token (input-token equivalents)");
        assert_eq!(price_unit(&Prices::parse("input=2").unwrap()), "per 1000000 tokens (USD)");
    }

    #[test]
    fn calibration_ratios_without_real_tokens_are_empty_not_zero() {
        let row = |tokens: u64| CalibrationRow {
            estimator: "len/4".into(),
            group: "all".into(),
            key: String::new(),
            bytes: 8,
            tokens,
            estimate: 2.0,
            error: if tokens > 0 { 2.0 / tokens as f64 - 1.0 } else { 0.0 },
            bytes_per_token: if tokens > 0 { 8.0 / tokens as f64 } else { 0.0 },
            ..Default::default()
        };
        let c = Calibration { tokenizer: "o200k".into(), rows: vec![row(0), row(4)], ..Default::default() };
        let t = calibration_rows(&c);
        let at = |r: usize, h: &str| t.rows[r][t.headers.iter().position(|x| *x == h).unwrap()].clone();
        for h in ["error", "bytes_per_token", "mean_abs_error", "calibrated_mean_abs_error"] {
            assert_eq!(at(0, h), "", "{h}");
        }
        assert_eq!((at(1, "error"), at(1, "bytes_per_token")), ("-50.0%".into(), "2.00".into()));
    }

    #[test]
    fn calibration_against_the_estimate_itself_says_so() {
        let note = |tokenizer: &str| {
            let c = Calibration { tokenizer: tokenizer.into(), rows: Vec::new(), ..Default::default() };
            calibration_sections(&c)[0].text.iter().any(|l| l.contains("reference is len/4 itself"))
        };
        assert!(note("estimate"));
        assert!(!note("o200k"));
    }

    #[test]
    fn cost_events_written_one_at_a_time_are_the_csv_of_the_table() {
        let event = |request: usize, cold: bool, break_even: Option<f64>| EventRow {
            trace: "a \"b\", c.jsonl".into(),
            conversation: "main".into(),
            policy: "keep-turns:n=3".into(),
            event: PruneEvent {
                request,
                changed_results: 2,
                freed_tokens: 1200,
                rewritten_tokens: 34_000,
                cold,
                rewrite_cost: 8.5,
                break_even_requests: break_even,
                saving_per_request: 3.5,
                later_requests: 7,
            },
        };
        for events in [vec![], vec![event(3, false, Some(2.25)), event(9, true, None)]] {
            let mut streamed = Vec::new();
            write_cost_events_csv(&events, "$", &mut streamed).unwrap();
            assert_eq!(streamed, super::super::csv::render_tabular(&cost_events(&events, "$")).unwrap());
            assert_eq!(String::from_utf8(streamed).unwrap().lines().count(), events.len() + 1);
        }
    }
}
