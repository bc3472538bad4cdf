//! The HTML report: one self-contained `index.html` (charts inline as SVG, tables, the
//! recommendation in words, the inputs and settings used) plus the CSV and JSON behind it and every
//! chart as SVG and PNG under `charts/`.
//!
//! [`build`] turns finished analyses into `(relative path, bytes)` pairs, `index.html` last, so a
//! caller that writes them in order (each atomically) leaves a complete index only once everything
//! it links to exists. No timestamps: the same inputs give the same bytes. The page carries a
//! four-line script that records how many charts and tables the browser rendered in
//! `<body data-rendered>`, which the headless-browser test reads; the page needs no script to show.
//! Nothing here touches files.

use rayon::prelude::*;
use serde::Serialize;

use crate::analysis::calibration::Calibration;
use crate::analysis::compare::{Comparison, ConversationRuns, EventRow};
use crate::analysis::recommend::Recommendation;
use crate::analysis::reconcile::Calibrated;
use crate::analysis::sweep::Sweep;
use crate::chart::{self, Chart, ChartError};
use crate::export::analysis::{self as tables, pct, sentence};
use crate::export::columns::Tabular;

mod headers;
mod headline;
mod page;
use page::{Figure, Look, Page, Prose, SectionView, Table, TimelineIntro};

/// The index page.
pub const INDEX: &str = "index.html";
/// Every data file the report writes besides the charts, with what it holds.
pub const DATA_FILES: [(&str, &str); 8] = [
    (REPORT_JSON, "everything below, as one JSON document"),
    ("sweep.csv", "threshold sweep, one row per threshold"),
    ("sweep-tools.csv", "per-tool recommendations"),
    ("compare.csv", "policies side by side"),
    ("cost.csv", "cache-aware cost per policy"),
    ("prune-events.csv", "every prune event: tokens freed versus cached tokens written again"),
    ("calibration.csv", "estimate versus real per tool and per content kind"),
    (TIMELINE_CSV, "every request of every conversation under every policy"),
];

/// One file of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportFile {
    /// Path relative to the report directory.
    pub path: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

impl ReportFile {
    fn new(path: impl Into<String>, bytes: Vec<u8>) -> ReportFile {
        ReportFile { path: path.into(), bytes }
    }
}

/// An input file as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputFile {
    /// Path as found.
    pub path: String,
    /// Format that read it, if any.
    pub format: Option<String>,
    /// Conversations in it.
    pub conversations: usize,
}

/// Everything the report shows.
#[derive(Debug, Serialize)]
pub struct ReportInput<'a> {
    /// ctxbudget version.
    pub version: &'a str,
    /// Paths as given on the command line.
    pub paths: Vec<String>,
    /// Files read, as the page lists them (report.json lists them in its envelope's `inputs`).
    #[serde(skip)]
    pub files: Vec<InputFile>,
    /// Settings as `(name, value)`, in display order, as the page shows them (report.json has
    /// them by name in its envelope's `settings`).
    #[serde(skip)]
    pub settings: Vec<(String, String)>,
    /// The threshold sweep.
    pub sweep: &'a Sweep,
    /// The policy comparison with costs.
    pub comparison: &'a Comparison,
    /// The recommended (policy, threshold) pair, in cost, against the sessions as recorded.
    pub recommendation: &'a Recommendation,
    /// Estimate versus real.
    pub calibration: &'a Calibration,
    /// How closely the calibrated replay reproduces the recorded prompt sizes, each request
    /// predicted without itself ([`crate::calibrate::held_out`]).
    pub fidelity: Calibrated,
    /// Conversations per calibration method (`exact`, `ratio`, `default`, `override`, `none`).
    pub calibration_methods: std::collections::BTreeMap<String, usize>,
    /// Of the conversations of method `default`, those whose agent has no default overhead and
    /// ratio, so the provider's default ratio was taken (only under `--tokenizer provider`).
    #[serde(skip)]
    pub provider_defaults: usize,
    /// Non-fatal problems (report.json: in its envelope).
    #[serde(skip)]
    pub warnings: &'a [String],
    /// Inputs that could not be read (report.json: in its envelope).
    #[serde(skip)]
    pub errors: &'a [String],
    /// How many conversations get a timeline chart, by peak context and by saving (`None`: all).
    #[serde(skip)]
    pub timelines: Option<usize>,
}

fn csv(t: &Tabular) -> Result<Vec<u8>, ChartError> {
    crate::export::csv::render_tabular(t)
        .map_err(|e| ChartError { chart: "csv".into(), message: e.to_string() })
}

/// A chart rendered both ways, and its `<figure>`.
fn figure(chart: &impl Chart, stem: &str, files: &mut Vec<ReportFile>) -> Result<Figure, ChartError> {
    let svg = chart::svg(chart)?;
    files.push(ReportFile::new(chart::path(stem, "png"), chart::png(chart)?));
    files.push(ReportFile::new(chart::path(stem, "svg"), svg.clone().into_bytes()));
    // A placeholder's reason is said in the caption too, not only inside the picture.
    let caption = match chart.not_drawn() {
        Some(reason) => format!("{}: not drawn, {reason}", chart.title()),
        None => chart.title().to_owned(),
    };
    Ok(Figure { svg, caption, svg_path: chart::path(stem, "svg"), png_path: chart::path(stem, "png") })
}

/// At most this many prune events are listed on the page; prune-events.csv has every one.
pub const PAGE_EVENTS: usize = 1000;

/// The prune events, folded: every one, or, when there are more than [`PAGE_EVENTS`], those
/// [`costliest_events`] gives. A large corpus has tens of thousands (13 copies of the shared corpus:
/// 27,829, 9 MB of HTML), which made the page slow to open for rows nobody reads there.
fn page_events(c: &Comparison) -> (String, Vec<SectionView>) {
    let unit = &c.cache.prices.unit;
    let (summary, section) = match costliest_events(&c.events, PAGE_EVENTS) {
        None => (
            format!("Every prune event ({}; also in prune-events.csv)", c.events.len()),
            tables::cost_events_section(&c.events, unit),
        ),
        Some(shown) => {
            let shown: Vec<EventRow> = shown.into_iter().map(|i| c.events[i].clone()).collect();
            (
                format!(
                    "The {PAGE_EVENTS} prune events that force the most cached tokens to be written again, \
                     of {} (every one is in prune-events.csv)",
                    c.events.len()
                ),
                tables::cost_events_section(&shown, unit),
            )
        }
    };
    let look = Look { unit, fold: false, ..Look::default() };
    (summary, page::sections(&[section], &look))
}

/// `None` when there are at most `limit` events; else the indices of the `limit` that force the
/// most cached tokens to be written again, costliest first, ties in input order.
fn costliest_events(events: &[EventRow], limit: usize) -> Option<Vec<usize>> {
    (events.len() > limit).then(|| largest(events.len(), limit, |i| events[i].event.rewritten_tokens))
}

/// Which conversations get a timeline chart, in input order: of `limit`, the half (rounded up) with
/// the largest peak context, then those where a policy saves the most input tokens (a saving over
/// 0) among the others, then, while fewer than `limit` are chosen, the next largest peaks; or all.
/// Ties go to the earlier one. A conversation's chart is named by its place among all of them, so
/// it keeps its file name whatever the limit.
fn timeline_conversations(conversations: &[&ConversationRuns], limit: Option<usize>) -> Vec<usize> {
    let Some(limit) = limit else { return (0..conversations.len()).collect() };
    let by_peak = largest(conversations.len(), limit, |i| peak_of(conversations[i]));
    let by_savings = largest(conversations.len(), limit, |i| saving_of(conversations[i]));
    let mut chosen: Vec<usize> = by_peak.iter().copied().take(limit.div_ceil(2)).collect();
    for &i in by_savings.iter().filter(|&&i| saving_of(conversations[i]) > 0) {
        if chosen.len() < limit && !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    for &i in &by_peak {
        if chosen.len() < limit && !chosen.contains(&i) {
            chosen.push(i);
        }
    }
    chosen.sort_unstable();
    chosen
}

/// The per-request rows a report draws, gathered while the conversations are compared so that a
/// large corpus's rows are never all held: the runs of the conversations that may get a chart.
/// (Every row goes to timeline.csv as its file is compared: [`TIMELINE_CSV`].)
#[derive(Debug, Default)]
pub struct Timelines {
    /// Conversations compared, all of which are in timeline.csv.
    pub conversations: usize,
    /// The conversations whose runs were kept, with their place among all of them (in that order):
    /// at least those that get a chart ([`TimelineChoice`]).
    pub kept: Vec<(usize, ConversationRuns)>,
    /// What every conversation compared records (models, request times).
    pub seen: Seen,
}

/// Every prune event of the comparison ([`write_prune_events`]): written by the caller, not by
/// [`build`], straight into the file (113,469 lines for the generated 1 GB corpus).
pub const PRUNE_EVENTS_CSV: &str = "prune-events.csv";

/// Writes [`PRUNE_EVENTS_CSV`] of `input` to `out`, one event at a time.
pub fn write_prune_events(input: &ReportInput<'_>, out: impl std::io::Write) -> csv::Result<()> {
    let c = input.comparison;
    tables::write_cost_events_csv(&c.events, &c.cache.prices.unit, out)
}

/// Every request of every compared conversation under every policy, one line each
/// ([`crate::export::columns::timeline_csv_header`], then [`crate::export::columns::timeline_csv_rows`] of each file in input
/// order): written by the caller as the files are compared, not by [`build`].
pub const TIMELINE_CSV: &str = "timeline.csv";

/// Keeps the runs of the `limit` conversations with the largest peak context among those offered,
/// and of the `limit` where a policy saves the most input tokens, the earlier one on a tie (all of
/// them without a limit), whatever order they are offered in: every conversation the report would
/// pick among all of them ([`timeline_conversations`]). A conversation is named by
/// `(file, conversation)` places, which order as its place among all conversations does. It also
/// notes what every conversation offered records ([`Seen`]).
pub struct TimelineChoice {
    limit: Option<usize>,
    kept: std::sync::Mutex<std::collections::BTreeMap<ChoiceKey, ConversationRuns>>,
    saving: std::sync::Mutex<std::collections::BTreeMap<ChoiceKey, ConversationRuns>>,
    seen: std::sync::Mutex<Seen>,
}

/// Largest value first (peak context, or saving), then the earlier place `(file, conversation)`.
type ChoiceKey = (std::cmp::Reverse<u64>, (usize, usize));

/// What the conversations record of themselves, for the page's "what was analysed": the models
/// they name and when their requests were sent. The same whatever order they are noted in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// Conversations per model named (a conversation that names two counts for both).
    pub models: std::collections::BTreeMap<String, usize>,
    /// Conversations that name no model.
    pub without_model: usize,
    /// The earliest and the latest request time (RFC 3339, UTC, as the rows carry them).
    pub span: Option<(String, String)>,
    /// Conversations with no request time.
    pub without_time: usize,
    /// Conversations noted.
    pub conversations: usize,
}

impl Seen {
    /// Notes one conversation (its baseline run's rows).
    fn note(&mut self, rows: &[crate::result::RequestRow]) {
        self.conversations += 1;
        let mut models: Vec<&str> = rows.iter().filter_map(|r| r.model.as_deref()).collect();
        models.sort_unstable();
        models.dedup();
        if models.is_empty() {
            self.without_model += 1;
        }
        for m in models {
            *self.models.entry(m.to_owned()).or_default() += 1;
        }
        let times = rows.iter().filter_map(|r| r.timestamp.as_deref());
        let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
            self.without_time += 1;
            return;
        };
        self.span = Some(match self.span.take() {
            None => (first.to_owned(), last.to_owned()),
            Some((a, b)) => (a.min(first.to_owned()), b.max(last.to_owned())),
        });
    }
}

impl TimelineChoice {
    /// A choice of `limit` conversations (`None`: all).
    pub fn new(limit: Option<usize>) -> TimelineChoice {
        TimelineChoice {
            limit,
            kept: Default::default(),
            saving: Default::default(),
            seen: Default::default(),
        }
    }

    /// Offers conversation `place` (file, conversation), dropping it or the one it displaces when
    /// more than `limit` are kept by peak, and by saving.
    pub fn offer(&self, place: (usize, usize), runs: ConversationRuns) {
        crate::lock(&self.seen).note(runs.runs.first().map_or(&[][..], |r| &r.rows));
        let Some(limit) = self.limit else {
            crate::lock(&self.kept).insert((std::cmp::Reverse(peak_of(&runs)), place), runs);
            return;
        };
        let saving = saving_of(&runs);
        if saving > 0 {
            keep_within(&mut crate::lock(&self.saving), limit, (std::cmp::Reverse(saving), place), || {
                runs.clone()
            });
        }
        keep_within(&mut crate::lock(&self.kept), limit, (std::cmp::Reverse(peak_of(&runs)), place), || runs);
    }

    /// What the conversations offered record.
    pub fn seen(&self) -> Seen {
        crate::lock(&self.seen).clone()
    }

    /// The kept conversations with their places, in place order, each once.
    pub fn into_kept(self) -> Vec<((usize, usize), ConversationRuns)> {
        let into = |m: std::sync::Mutex<_>| m.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept: std::collections::BTreeMap<ChoiceKey, ConversationRuns> = into(self.kept);
        let saving: std::collections::BTreeMap<ChoiceKey, ConversationRuns> = into(self.saving);
        let by_place: std::collections::BTreeMap<(usize, usize), ConversationRuns> =
            saving.into_iter().chain(kept).map(|((_, place), runs)| (place, runs)).collect();
        by_place.into_iter().collect()
    }
}

/// Inserts `key` (its runs made by `runs`) into `kept` unless `limit` larger keys are there, and
/// drops the smallest when there are then more than `limit`.
fn keep_within(
    kept: &mut std::collections::BTreeMap<ChoiceKey, ConversationRuns>,
    limit: usize,
    key: ChoiceKey,
    runs: impl FnOnce() -> ConversationRuns,
) {
    if kept.len() == limit && kept.last_key_value().is_none_or(|(last, _)| key > *last) {
        return;
    }
    kept.insert(key, runs());
    if kept.len() > limit {
        kept.pop_last();
    }
}

/// A conversation's largest context as recorded (its baseline run's peak): what picks the
/// timelines drawn, since the largest contexts are where a policy has the most to do and a window
/// is nearest (a long run of small requests draws little a table does not say).
fn peak_of(c: &ConversationRuns) -> u64 {
    c.runs.first().map_or(0, |r| r.summary.peak_context_tokens)
}

/// The most input tokens a policy saves on a conversation against its baseline (the first run):
/// the other pick of the timelines drawn, since where a policy saves the most is what a reader of
/// the recommendation wants to see.
fn saving_of(c: &ConversationRuns) -> u64 {
    let Some((base, others)) = c.runs.split_first() else { return 0 };
    let least =
        others.iter().map(|r| r.summary.total_input_tokens).min().unwrap_or(base.summary.total_input_tokens);
    base.summary.total_input_tokens.saturating_sub(least)
}

/// The indices below `n` of the (at most) `limit` largest `key`s, largest first, ties in index order.
fn largest(n: usize, limit: usize, key: impl Fn(usize) -> u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(key(i)), i));
    order.truncate(limit);
    order
}

/// The findings in words.
pub fn findings(input: &ReportInput<'_>) -> Vec<String> {
    let mut out = vec![input.recommendation.sentence.clone()];
    out.extend(fidelity(input));
    match &input.sweep.recommendation {
        Some(r) => out.push(format!(
            "By input tokens (the tolerance priced with the prompt cache), under {}: SUMMARY_THRESHOLD {} bytes. {}.",
            input.sweep.policy,
            r.threshold,
            sentence(&r.reason)
        )),
        None => out.push("No threshold recommendation: the inputs have no tool results to sweep.".into()),
    }
    let moved: Vec<String> = input
        .sweep
        .per_tool
        .iter()
        .filter_map(|t| {
            let r = t.recommendation.as_ref()?;
            let overall = input.sweep.recommendation.as_ref()?.threshold;
            (r.threshold != overall).then(|| format!("{} → {} bytes", t.tool, r.threshold))
        })
        .collect();
    if !moved.is_empty() {
        out.push(format!("Per tool, the recommendation moves: {}.", moved.join(", ")));
    }
    // The cheapest policy at the comparison's one threshold is left to the recommendation above,
    // which prices every policy at every threshold; what stays is why a prune can cost more.
    let c = input.comparison;
    for p in c.policies.iter().filter(|p| p.saves_tokens_costs_more) {
        out.push(format!(
            "{} at threshold {} saves {} of input tokens against the sessions as recorded, but costs {} more: {}.",
            p.policy,
            c.threshold,
            pct(p.savings),
            pct(p.cost_change),
            match (p.prune_events, p.compaction.compactions) {
                (1.., 0) => format!(
                    "its prunes force {} cached tokens to be written again for {} tokens freed",
                    p.cost.rewritten_tokens, p.cost.freed_tokens
                ),
                _ => p.why_it_costs_more().to_owned(),
            }
        ));
    }
    let estimated = input.calibration.is_against_estimate();
    if let Some(all) = input.calibration.rows.iter().find(|r| r.group == "all" && r.tokens > 0) {
        out.push(if estimated {
            "len/4 is the report's own tokenizer here (--tokenizer estimate), so there are no real \
             tokens to set it against: --tokenizer o200k or cl100k measures its error."
                .into()
        } else {
            format!(
                "{} is {} off real {} over all tool outputs ({:.2} bytes per token; the seed assumes 4).{}",
                all.estimator,
                pct(all.error),
                input.calibration.reference(),
                all.bytes_per_token,
                input.calibration.scaling_note().map(|n| format!(" {n}")).unwrap_or_default()
            )
        });
    }
    out
}

/// The first findings: how closely the replay reproduces what was billed, and which
/// conversations carry an estimated overhead.
fn fidelity(input: &ReportInput<'_>) -> Vec<String> {
    let f = &input.fidelity;
    let mut out = vec![match (f.median_rel, f.p90_rel) {
        (Some(median), Some(p90)) => format!(
            "The replay reproduces the billed prompt sizes within {} median, {} p90 over {} requests \
             (each predicted by the calibration fitted without it; recorded / replayed total {:.3}).",
            pct(median),
            pct(p90),
            f.requests,
            f.total_ratio.unwrap_or(f64::NAN)
        ),
        _ => format!(
            "No recorded prompt sizes to check the replay against ({}).",
            f.reason.as_deref().unwrap_or("none recorded")
        ),
    }];
    if let Some(n) = input.calibration_methods.get(crate::calibrate::Method::Default.name()) {
        out.push(defaults_note(*n, input.provider_defaults));
    }
    out
}

/// The note on the `n` conversations calibrated with defaults, `by_provider` of them with the
/// provider's default ratio because their agent has no defaults (which `--tokenizer provider`
/// alone takes: under another tokenizer they are not calibrated, so the note does not name it).
fn defaults_note(n: usize, by_provider: usize) -> String {
    let defaults = if by_provider == 0 {
        "the agent's defaults (docs/calibration.md)"
    } else {
        "the agent's defaults (or, for an agent with none, no overhead and the provider's default ratio; \
         docs/calibration.md)"
    };
    format!(
        "{n} conversation(s) record fewer than 3 prompt sizes: their unrecorded overhead and token ratio are \
         {defaults}, an estimate."
    )
}

/// How the cost tables are read, on the page (docs/analyses.md, "`cost`", has it too, but the page
/// travels alone).
const COST_MODEL: &str = "<p>How to read the cost: a request is <em>warm</em> when the one before it in \
its conversation was sent at most the cache TTL earlier. A warm request reads from the cache the prefix it \
shares with that request (<code>read_tokens</code>, at the read price) and writes the rest \
(<code>write_tokens</code>, at the write price); a cold one (<code>cold_requests</code>) writes everything. A \
prune changes an item that is already cached, so every cached token after it is written again \
(<code>rewritten_tokens</code>), for the tokens it takes out (<code>freed_tokens</code>). A rewritten token \
costs the write price less the read price once; a freed token saves the read price at every later warm \
request of the same context, up to a compaction (<code>later_requests</code>). \
<code>break_even_requests</code> is how many such requests a prune needs to pay its rewrite back, and it \
pays off (<code>pays_off</code>, counted in <code>events_paying_off</code>) when that many follow. So a policy \
can free more tokens than it rewrites and still cost more.</p>\n";

/// The page's style: readable at 390 px as at 1400 (text 16 px, tables 14 px), charts scaled to the
/// width (each SVG has a `viewBox`), wide tables scrolled sideways in their own box, long words
/// (paths, policy specs) broken rather than widening the page; the recommended rows highlighted
/// (a light background and bold, which no colour-vision deficiency loses).
const STYLE: &str = "body{font-family:sans-serif;font-size:16px;line-height:1.45;margin:2em auto;max-width:1100px;\
padding:0 1em;color:#212121;overflow-wrap:anywhere}\
.scroll{overflow-x:auto;margin:.5em 0 1.5em}table{border-collapse:collapse;font-size:14px}\
th,td{border:1px solid #ccc;padding:2px 6px;text-align:left;overflow-wrap:normal}td.n{text-align:right}\
th{background:#f5f5f5}figure{margin:1em 0}figure svg{display:block;width:100%;max-width:960px;height:auto}\
figcaption{font-size:14px;color:#555}ul.findings li{margin:.4em 0}details{margin:1em 0}\
tr.rec td{background:#fff2cc;font-weight:600}p.answer{font-size:18px;font-weight:600}\
.headline{border-left:4px solid #595959;padding:.2em 0 .2em 1em;margin:1em 0}nav ol{columns:2}\
@media (max-width:600px){body{margin:1em auto;padding:0 .6em}h1{font-size:1.6em}nav ol{columns:1}}";

/// The page's own check, read by the tests in a headless browser (`data-rendered` on `<body>`): how
/// many charts the browser laid out with a non-empty box, how many tables, how many elements outside
/// a `.scroll` box reach past the viewport's width, and the smallest text size in pixels.
const SCRIPT: &str = "addEventListener('load',()=>{const s=[...document.querySelectorAll('figure svg')];\
const d=s.filter(e=>{const b=e.getBBox();return b.width>0&&b.height>0}).length;\
const w=document.documentElement.clientWidth;\
const o=[...document.body.querySelectorAll('*')].filter(e=>!e.closest('.scroll')&&!e.closest('svg')\
&&e.getBoundingClientRect().right>w+1).length;\
const f=Math.min(...[...document.querySelectorAll('p,li,td,th,figcaption,summary')].map(e=>parseFloat(getComputedStyle(e).fontSize)));\
document.body.dataset.rendered='charts='+d+'/'+s.length+' tables='+document.querySelectorAll('table').length;\
document.body.dataset.layout='overflow='+o+' minfont='+f;});";

/// The whole report ([`ReportInput`]) as one JSON document, serialised by the caller straight into
/// the file (large for a large corpus: it lists every prune event), not built in memory.
pub const REPORT_JSON: &str = "report.json";

/// Every file of the report but [`TIMELINE_CSV`], [`REPORT_JSON`] and [`PRUNE_EVENTS_CSV`],
/// `index.html` last.
pub fn build(input: &ReportInput<'_>, timelines: Timelines) -> Result<Vec<ReportFile>, ChartError> {
    let c = input.comparison;
    let Timelines { conversations: compared, kept, seen } = timelines;
    type Table<'t> = &'t (dyn Fn() -> Tabular + Sync);
    let tables: [(&str, Table<'_>); 5] = [
        ("sweep.csv", &|| tables::sweep_rows(&input.sweep.rows, input.sweep.recommendation.as_ref())),
        ("sweep-tools.csv", &|| tables::sweep_tools(input.sweep)),
        ("compare.csv", &|| tables::compare_policies(c)),
        ("cost.csv", &|| tables::cost_policies(c)),
        ("calibration.csv", &|| tables::calibration_rows(input.calibration)),
    ];
    // The data files are independent of each other: made in parallel, listed in this order.
    let mut files = tables
        .par_iter()
        .map(|(path, table)| Ok(ReportFile::new(*path, csv(&table())?)))
        .collect::<Result<Vec<ReportFile>, ChartError>>()?;

    let sweep_figure = figure(&chart::sweep::prepare_or_placeholder(input.sweep), chart::SWEEP, &mut files)?;
    let policies_figure = figure(&chart::policies::prepare_or_placeholder(c), chart::POLICIES, &mut files)?;
    let calibration_figure = figure(
        &chart::calibration::prepare_or_placeholder(input.calibration),
        chart::CALIBRATION,
        &mut files,
    )?;
    let unit = c.cache.prices.unit.as_str();
    // The recommended policy's rows, and the recommended threshold's, are highlighted.
    let pick = input.recommendation.recommendation.as_ref().map(|r| r.pick.policy.as_str());
    let is_pick = |headers: &[&str], row: &[String]| {
        headers.iter().position(|h| *h == "policy").is_some_and(|i| Some(row[i].as_str()) == pick)
    };
    let is_recommended_threshold = |headers: &[&str], row: &[String]| {
        headers.iter().position(|h| *h == "mark").is_some_and(|i| row[i].starts_with("recommended"))
    };
    let policy_look = Look { unit, recommended: &is_pick, ..Look::default() };
    let mut policy_sections = page::sections(&tables::compare_sections(c), &policy_look);
    policy_sections.extend(page::sections(&[tables::cost_policy_section(c)], &policy_look));
    let (events_summary, events_sections) = page_events(c);

    // The kept conversations include the chosen ones and are in conversation order, so choosing
    // among them chooses among all of them.
    let drawn =
        timeline_conversations(&kept.iter().map(|(_, runs)| runs).collect::<Vec<_>>(), input.timelines);
    let timeline_intro = timeline_intro(c, compared, drawn.len());
    // The chosen conversations' timelines, drawn in parallel (most of a large report's time) and
    // put back in conversation order.
    let agents: std::collections::HashMap<&str, &str> =
        input.files.iter().filter_map(|f| Some((f.path.as_str(), f.format.as_deref()?))).collect();
    let timelines: Vec<Result<(Figure, Vec<ReportFile>), ChartError>> = drawn
        .par_iter()
        .map(|&j| {
            let (i, conv) = &kept[j];
            let agent = agents.get(conv.trace.as_str()).copied().unwrap_or("");
            let named = (conv.trace.as_str(), conv.conversation.as_str(), agent);
            let t = chart::timeline::prepare(named, &conv.runs, c.window, c.cache.ttl_ms);
            let mut own = Vec::new();
            figure(&t, &chart::timeline_stem(*i), &mut own).map(|figure| (figure, own))
        })
        .collect();
    let mut timeline_figures = Vec::with_capacity(timelines.len());
    for timeline in timelines {
        let (figure, own) = timeline?;
        timeline_figures.push(figure);
        files.extend(own);
    }

    let (settings, inputs) = settings_tables(input);
    let page = Page {
        style: STYLE,
        script: SCRIPT,
        cost_model: COST_MODEL,
        headline: headline::headline(input, &seen),
        // The recommendation and the replay's fidelity are at the top of the page already.
        findings: findings(input).iter().skip(1 + fidelity(input).len()).map(|f| Prose::new(f)).collect(),
        sweep_figure,
        sweep_sections: page::sections(
            &tables::sweep_sections(input.sweep),
            &Look { csv: Some("sweep.csv"), recommended: &is_recommended_threshold, ..Look::default() },
        ),
        policies_figure,
        policy_sections,
        events_summary,
        events_sections,
        calibration_figure,
        calibration_sections: page::sections(
            &tables::calibration_sections(input.calibration),
            &Look { csv: Some("calibration.csv"), ..Look::default() },
        ),
        timeline_intro,
        timeline_figures,
        settings,
        inputs,
        errors: input.errors,
        warnings: input.warnings,
        data_files: DATA_FILES,
    };
    let html = askama::Template::render(&page)
        .map_err(|e| ChartError { chart: INDEX.into(), message: e.to_string() })?;
    files.push(ReportFile::new(INDEX, html.into_bytes()));
    Ok(files)
}

/// What the timelines part says first, with `compared` conversations replayed and `drawn` of them
/// drawn.
fn timeline_intro(c: &Comparison, compared: usize, drawn: usize) -> TimelineIntro {
    if compared == 0 {
        TimelineIntro::NoneReplayed
    } else if drawn == 0 {
        TimelineIntro::NoneDrawn(Prose::new(&format!(
            "No timeline drawn (`--timelines 0`); the requests of all {compared} conversations are in \
             timeline.csv."
        )))
    } else {
        let which = if drawn == compared {
            "each conversation".to_owned()
        } else {
            format!(
                "the {drawn} of {compared} conversations with the largest peak context (half of them) or where a \
                 policy saves the most input tokens (the others; `--timelines all` draws every one; every \
                 conversation's requests are in timeline.csv)"
            )
        };
        TimelineIntro::Drawn {
            which: Prose::new(&which),
            policy: c.policies.first().map_or("", |p| p.policy.as_str()).to_owned(),
        }
    }
}

/// The settings used and the files read, as the page's two tables.
fn settings_tables(input: &ReportInput<'_>) -> (Table, Table) {
    let mut settings = Tabular { headers: vec!["setting", "value"], rows: Vec::new() };
    settings.rows.push(vec!["ctxbudget".into(), input.version.into()]);
    settings.rows.push(vec!["paths".into(), input.paths.join(" ")]);
    settings.rows.extend(input.settings.iter().map(|(k, v)| vec![k.clone(), v.clone()]));
    let inputs = Tabular {
        headers: vec!["file", "format", "conversations"],
        rows: input
            .files
            .iter()
            .map(|f| vec![f.path.clone(), f.format.clone().unwrap_or_default(), f.conversations.to_string()])
            .collect(),
    };
    (Table::from(&settings), Table::from(&inputs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A conversation whose baseline peaks at `peak` tokens over many requests.
    fn with_peak(peak: crate::model::Tokens, conversation: &str) -> ConversationRuns {
        let mut run = crate::result::Run::default();
        run.summary.peak_context_tokens = peak;
        run.summary.requests = 100 - peak as usize;
        run.summary.total_input_tokens = 1000;
        ConversationRuns { trace: "t".into(), conversation: conversation.into(), runs: vec![run] }
    }

    /// [`with_peak`] with a second policy that saves `saving` input tokens.
    fn with_saving(peak: crate::model::Tokens, saving: u64, conversation: &str) -> ConversationRuns {
        let mut c = with_peak(peak, conversation);
        let mut other = c.runs[0].clone();
        other.summary.total_input_tokens -= saving;
        c.runs.push(other);
        c
    }

    #[test]
    fn the_defaults_note_names_the_provider_ratio_only_when_a_conversation_took_it() {
        let agent = defaults_note(4, 0);
        assert_eq!(
            agent,
            "4 conversation(s) record fewer than 3 prompt sizes: their unrecorded overhead and token ratio are \
             the agent's defaults (docs/calibration.md), an estimate."
        );
        let both = defaults_note(6, 2);
        assert!(both.starts_with("6 conversation(s)"), "{both}");
        assert!(
            both.contains("or, for an agent with none, no overhead and the provider's default ratio"),
            "{both}"
        );
    }

    #[test]
    fn half_the_timelines_go_to_the_largest_peaks_and_the_others_to_the_largest_savings() {
        // Peaks 3, 9, 1, 9, 5, 2; savings 0, 10, 50, 0, 0, 20.
        let owned: Vec<ConversationRuns> = [(3, 0), (9, 10), (1, 50), (9, 0), (5, 0), (2, 20)]
            .iter()
            .map(|&(p, s)| with_saving(p, s, "c"))
            .collect();
        let c: Vec<&ConversationRuns> = owned.iter().collect();
        assert_eq!(timeline_conversations(&c, Some(1)), [1]);
        assert_eq!(timeline_conversations(&c, Some(2)), [1, 2]);
        // The two largest peaks (1 and 3), then savings 50 and 20 (10 is 1's, chosen already).
        assert_eq!(timeline_conversations(&c, Some(4)), [1, 2, 3, 5]);
        // Only three savings over 0: after them, the next largest peak.
        assert_eq!(timeline_conversations(&c, Some(6)), [0, 1, 2, 3, 4, 5]);
        assert_eq!(timeline_conversations(&c, Some(5)), [1, 2, 3, 4, 5]);
        assert_eq!(saving_of(&owned[2]), 50);
        assert_eq!(saving_of(&with_peak(4, "c")), 0);
    }

    #[test]
    fn timelines_go_to_the_conversations_with_the_largest_peak_kept_in_input_order() {
        let owned: Vec<ConversationRuns> = [3, 9, 1, 9, 5].iter().map(|&r| with_peak(r, "c")).collect();
        let c: Vec<&ConversationRuns> = owned.iter().collect();
        assert_eq!(timeline_conversations(&c, None), [0, 1, 2, 3, 4]);
        assert_eq!(timeline_conversations(&c, Some(2)), [1, 3]);
        assert_eq!(timeline_conversations(&c, Some(3)), [1, 3, 4]);
        assert_eq!(timeline_conversations(&c, Some(0)), Vec::<usize>::new());
        assert_eq!(timeline_conversations(&c, Some(10)), [0, 1, 2, 3, 4]);
    }

    #[test]
    fn the_timeline_choice_keeps_what_a_choice_among_all_picks_whatever_the_order_offered() {
        // (file, conversation) places in input order, with their peaks; ties across files.
        // and savings, ties too.
        let all = [((0, 0), 3), ((0, 1), 9), ((1, 0), 1), ((2, 0), 9), ((2, 1), 5), ((2, 2), 9), ((3, 0), 5)];
        let savings = [7, 0, 30, 7, 0, 2, 30];
        let owned: Vec<ConversationRuns> =
            all.iter().zip(savings).map(|(&(p, r), s)| with_saving(r, s, &format!("{p:?}"))).collect();
        let refs: Vec<&ConversationRuns> = owned.iter().collect();
        for limit in [None, Some(0), Some(1), Some(2), Some(3), Some(4), Some(9)] {
            let expected: Vec<String> =
                timeline_conversations(&refs, limit).iter().map(|&i| owned[i].conversation.clone()).collect();
            let mut order: Vec<usize> = (0..all.len()).collect();
            for turn in 0..all.len() {
                order.rotate_left(turn % 3 + 1);
                order.swap(0, turn % all.len());
                let choice = TimelineChoice::new(limit);
                for &k in &order {
                    choice.offer(all[k].0, owned[k].clone());
                }
                let kept: Vec<ConversationRuns> = choice.into_kept().into_iter().map(|(_, c)| c).collect();
                let refs: Vec<&ConversationRuns> = kept.iter().collect();
                let chosen: Vec<String> = timeline_conversations(&refs, limit)
                    .iter()
                    .map(|&i| kept[i].conversation.clone())
                    .collect();
                assert_eq!(chosen, expected, "limit {limit:?}, order {order:?}");
                // At most the `limit` largest by each measure are held.
                assert!(kept.len() <= limit.map_or(all.len(), |l| 2 * l), "{} kept", kept.len());
            }
        }
    }

    #[test]
    fn the_page_lists_every_prune_event_up_to_the_limit_then_the_costliest() {
        let events: Vec<EventRow> = [5, 9, 0, 9, 7, 1]
            .iter()
            .enumerate()
            .map(|(request, &rewritten_tokens)| EventRow {
                trace: "t".into(),
                conversation: "c".into(),
                policy: "p".into(),
                event: crate::analysis::cost::PruneEvent {
                    request,
                    changed_results: 1,
                    freed_tokens: 10,
                    rewritten_tokens,
                    cold: false,
                    rewrite_cost: 0.0,
                    saving_per_request: 0.0,
                    break_even_requests: None,
                    later_requests: 0,
                },
            })
            .collect();
        assert_eq!(costliest_events(&events, 6), None);
        assert_eq!(costliest_events(&events, 100), None);
        assert_eq!(costliest_events(&events, 3), Some(vec![1, 3, 4]));
        assert_eq!(costliest_events(&events, 5), Some(vec![1, 3, 4, 0, 5]));
        assert_eq!(costliest_events(&events, 0), Some(vec![]));
    }
}
