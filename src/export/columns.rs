//! Column definitions shared by the table-like exporters (terminal table, Markdown, CSV), so the
//! three always agree on names and order. Headers are the JSON field names.
//!
//! Rows are not derived from the serde structs with the `csv` crate's serde support: these lists
//! also feed the terminal and Markdown tables, and its serializer refuses the shapes the structs
//! have (`RunSummary::transforms` is a `Vec` written space-joined, `calibration` and `timeline` nest,
//! `RequestRow` flattens its categories, which serde writes as a map) and writes `f64` through ryu
//! (`1.0` where a cell reads `1`), so a derived row needs a second flat struct per table.

use std::fmt::Write as _;
use unicode_width::UnicodeWidthStr;

use rayon::prelude::*;

use crate::result::{PolicyTotals, ReplayReport, RequestRow, RunSummary};

/// A rectangular table of cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tabular {
    /// Column headers.
    pub headers: Vec<&'static str>,
    /// Rows of cells, each as long as `headers`.
    pub rows: Vec<Vec<String>>,
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Percentage with one decimal, or empty.
pub fn percent(v: Option<f64>) -> String {
    // A value that rounds to zero prints as 0.0%, never -0.0%.
    let shown = |v: f64| if (v * 100.0).abs() < 0.05 { 0.0 } else { v * 100.0 };
    v.map(|v| format!("{:.1}%", shown(v))).unwrap_or_default()
}

/// The tokenizer that counted `r`'s conversation: under `--tokenizer provider` the encoding
/// chosen for it by its model (`o200k` or `cl100k`), otherwise the run's tokenizer.
fn counted_with(r: &RunSummary) -> &str {
    r.calibration.tokenizer.map_or(&r.tokenizer, |e| e.name())
}

/// Every field of every run summary (the CSV shape), the calibration flattened at the end: the
/// tokenizer that counted the conversation, the method, the overhead and the ratio.
pub fn runs_full(runs: &[RunSummary]) -> Tabular {
    Tabular {
        headers: vec![
            "trace",
            "conversation",
            "format",
            "policy",
            "transforms",
            "threshold",
            "tokenizer",
            "decide_with",
            "requests",
            "tool_results",
            "split_results",
            "tool_output_bytes",
            "tool_output_tokens",
            "content_tokens",
            "content_estimate",
            "peak_context_tokens",
            "total_input_tokens",
            "final_context_tokens",
            "pruned_tokens",
            "prune_events",
            "compactions",
            "summarized_tokens",
            "summary_tokens",
            "summarization_input_tokens",
            "summarization_output_tokens",
            "recorded_input_tokens",
            "recorded_requests",
            "counted_with",
            "calibration",
            "overhead",
            "ratio",
        ],
        rows: runs
            .iter()
            .map(|r| {
                vec![
                    r.trace.clone(),
                    r.conversation.clone(),
                    r.format.clone(),
                    r.policy.clone(),
                    r.transforms.join(" "),
                    r.threshold.to_string(),
                    r.tokenizer.clone(),
                    r.decide_with.clone(),
                    r.requests.to_string(),
                    r.tool_results.to_string(),
                    r.split_results.to_string(),
                    r.tool_output_bytes.to_string(),
                    r.tool_output_tokens.to_string(),
                    r.content_tokens.to_string(),
                    r.content_estimate.to_string(),
                    r.peak_context_tokens.to_string(),
                    r.total_input_tokens.to_string(),
                    r.final_context_tokens.to_string(),
                    r.pruned_tokens.to_string(),
                    r.prune_events.to_string(),
                    r.compaction.compactions.to_string(),
                    r.compaction.summarized_tokens.to_string(),
                    r.compaction.summary_tokens.to_string(),
                    r.compaction.summarization_input_tokens.to_string(),
                    r.compaction.summarization_output_tokens.to_string(),
                    opt(r.recorded_input_tokens),
                    r.recorded_requests.to_string(),
                    counted_with(r).to_owned(),
                    r.calibration.method.name().to_owned(),
                    r.calibration.overhead.to_string(),
                    format!("{:.3}", r.calibration.ratio),
                ]
            })
            .collect(),
    }
}

/// The columns of the table below, in order.
pub const RUNS_BRIEF_HEADERS: [&str; 12] = [
    "trace",
    "conversation",
    "policy",
    "threshold",
    "requests",
    "tool_results",
    "split_results",
    "peak_context_tokens",
    "total_input_tokens",
    "pruned_tokens",
    "prune_events",
    "recorded_input_tokens",
];

/// The run summaries a person reads first (the terminal and Markdown shape).
pub fn runs_brief(runs: &[RunSummary]) -> Tabular {
    Tabular {
        headers: RUNS_BRIEF_HEADERS.to_vec(),
        rows: runs
            .iter()
            .map(|r| {
                vec![
                    r.trace.clone(),
                    r.conversation.clone(),
                    r.policy.clone(),
                    r.threshold.to_string(),
                    r.requests.to_string(),
                    r.tool_results.to_string(),
                    r.split_results.to_string(),
                    r.peak_context_tokens.to_string(),
                    r.total_input_tokens.to_string(),
                    r.pruned_tokens.to_string(),
                    r.prune_events.to_string(),
                    opt(r.recorded_input_tokens),
                ]
            })
            .collect(),
    }
}

/// The columns of the table below, in order.
pub const TOTALS_HEADERS: [&str; 9] = [
    "policy",
    "threshold",
    "conversations",
    "requests",
    "peak_context_tokens",
    "total_input_tokens",
    "savings",
    "pruned_tokens",
    "prune_events",
];

/// Totals per policy and threshold over all conversations.
pub fn totals(report: &ReplayReport) -> Tabular {
    let totals = PolicyTotals::by_policy(&report.runs);
    Tabular {
        headers: TOTALS_HEADERS.to_vec(),
        rows: totals
            .iter()
            .map(|t| {
                vec![
                    t.policy.clone(),
                    t.threshold.to_string(),
                    t.conversations.to_string(),
                    t.requests.to_string(),
                    t.peak_context_tokens.to_string(),
                    t.total_input_tokens.to_string(),
                    percent(t.savings),
                    t.pruned_tokens.to_string(),
                    t.prune_events.to_string(),
                ]
            })
            .collect(),
    }
}

/// What the terminal table and Markdown need to know of a table's rows before drawing any: each
/// column's widest line (at least one character), whether every cell of it is a number or empty,
/// and how many rows there are. Added up row by row and merged across parts, so rows made in two
/// passes (a replay that reads its inputs twice) are drawn as if they were held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnStats {
    /// Widest line of each column, in terminal columns.
    pub widths: Vec<usize>,
    /// Whether each column holds only numbers (a trailing `%` allowed) and empty cells.
    pub numeric: Vec<bool>,
    /// Rows added.
    pub rows: usize,
    /// Widest line of each column's cells, its header left out (a fitted terminal table draws
    /// other headers: [`super::fit`]).
    pub cells: Vec<usize>,
    /// Widest line of each column's cells once thousands separated ([`super::fit::group_thousands`]).
    pub grouped: Vec<usize>,
}

impl ColumnStats {
    /// The stats of a table with these headers and no rows yet.
    pub fn new(headers: &[&str]) -> ColumnStats {
        let mut stats = ColumnStats::default();
        for (i, h) in headers.iter().enumerate() {
            stats.widen(i, h);
        }
        stats
    }

    /// The stats of `headers` and every row of `rows`.
    pub fn of<R: AsRef<[String]>>(headers: &[&str], rows: impl Iterator<Item = R>) -> ColumnStats {
        let mut stats = ColumnStats::new(headers);
        rows.for_each(|r| stats.add(r.as_ref()));
        stats
    }

    /// Adds one row (a row longer than the headers widens the table).
    pub fn add<S: AsRef<str>>(&mut self, cells: &[S]) {
        self.rows += 1;
        for (i, cell) in cells.iter().enumerate() {
            let cell = cell.as_ref();
            self.widen(i, cell);
            self.numeric[i] &= cell.is_empty() || looks_numeric(cell);
            for line in cell.split('\n') {
                let width = terminal_safe(line).width();
                self.cells[i] = self.cells[i].max(width);
                self.grouped[i] = self.grouped[i].max(width + super::fit::separators(line));
            }
        }
    }

    /// Adds the rows another part's stats were made of (same headers).
    pub fn merge(&mut self, other: &ColumnStats) {
        self.rows += other.rows;
        for (i, (&w, &n)) in other.widths.iter().zip(&other.numeric).enumerate() {
            if i >= self.widths.len() {
                self.grow(i + 1);
            }
            self.widths[i] = self.widths[i].max(w);
            self.numeric[i] &= n;
            self.cells[i] = self.cells[i].max(other.cells[i]);
            self.grouped[i] = self.grouped[i].max(other.grouped[i]);
        }
    }

    /// Whether column `i` is aligned right: it holds only numbers, and there is a row.
    pub fn right(&self, i: usize) -> bool {
        self.rows > 0 && self.numeric.get(i).copied().unwrap_or(true)
    }

    /// Makes room for `columns` columns.
    fn grow(&mut self, columns: usize) {
        self.widths.resize(columns, 1);
        self.numeric.resize(columns, true);
        self.cells.resize(columns, 0);
        self.grouped.resize(columns, 0);
    }

    fn widen(&mut self, i: usize, cell: &str) {
        if i >= self.widths.len() {
            self.grow(i + 1);
        }
        let widest = cell.split('\n').map(|l| terminal_safe(l).width()).max().unwrap_or(0);
        self.widths[i] = self.widths[i].max(widest);
    }
}

/// One line of a terminal table's cell with its control characters (escape sequences, tabs,
/// carriage returns) written as `\u{1b}`: cells quote the logs (conversation ids, tool names,
/// paths), and an escape sequence in a log must not drive the terminal or break the frame.
pub fn terminal_safe(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        if c.is_control() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether a cell reads as a number (a trailing `%` allowed).
pub fn looks_numeric(s: &str) -> bool {
    s.trim_end_matches('%').parse::<f64>().is_ok()
}

/// One row per request of every run that carries a timeline.
pub fn timeline(runs: &[RunSummary]) -> Tabular {
    Tabular { headers: TIMELINE_HEADERS.to_vec(), rows: timeline_rows(runs).collect() }
}

/// The rows of [`timeline`], made one at a time (a renderer that walks them twice holds none).
pub fn timeline_rows(runs: &[RunSummary]) -> impl Iterator<Item = Vec<String>> + '_ {
    runs.iter().flat_map(|run| run.timeline.iter().flatten().map(move |r| timeline_row(run, r).to_vec()))
}

/// The runs of a report that carry a timeline, each with its rows: the shape of runs whose rows
/// are kept apart from their summaries.
pub fn timeline_parts(runs: &[RunSummary]) -> Vec<(&RunSummary, &[RequestRow])> {
    runs.iter().filter_map(|r| r.timeline.as_deref().map(|rows| (r, rows))).collect()
}

/// The [`ColumnStats`] of the [`timeline`] rows of `parts` (headers included).
pub fn timeline_stats(parts: &[(&RunSummary, &[RequestRow])]) -> ColumnStats {
    let mut stats = ColumnStats::new(&TIMELINE_HEADERS);
    for &(run, rows) in parts {
        for r in rows {
            stats.add(&timeline_row(run, r));
        }
    }
    stats
}

/// [`timeline`] as CSV, for runs whose rows are kept apart from their summaries: the bytes
/// `render_tabular(&timeline(..))` gives, written straight from the rows without a `String` per
/// cell (a report's timeline.csv has every request of every conversation under every policy:
/// 4.8 million cells for 13 copies of the shared corpus). Runs are written in parallel and joined
/// in order.
pub fn timeline_csv(parts: &[(&RunSummary, &[RequestRow])]) -> csv::Result<Vec<u8>> {
    let mut out = timeline_csv_header()?;
    out.extend_from_slice(&timeline_csv_rows(parts)?);
    Ok(out)
}

/// The header line of [`timeline_csv`].
pub fn timeline_csv_header() -> csv::Result<Vec<u8>> {
    let mut header = super::csv::Writer::from_writer(Vec::new());
    header.write_record(TIMELINE_HEADERS)?;
    header.into_inner()
}

/// The lines of [`timeline_csv`] after its header: the lines of several calls, one after the
/// other, are the lines of one call over all their runs.
pub fn timeline_csv_rows(parts: &[(&RunSummary, &[RequestRow])]) -> csv::Result<Vec<u8>> {
    let chunks = parts
        .par_iter()
        .map(|&(run, rows)| {
            let mut w = super::csv::Writer::from_writer(Vec::new());
            let mut number = String::new();
            for r in rows {
                for cell in timeline_cells(run, r) {
                    match cell {
                        Cell::Text(t) => w.write_field(t)?,
                        Cell::Number(n) => {
                            number.clear();
                            write!(number, "{n}").expect("writing to a String cannot fail");
                            w.write_field(&number)?
                        }
                        Cell::Empty => w.write_field("")?,
                    }
                }
                w.end_record()?;
            }
            w.into_inner()
        })
        .collect::<csv::Result<Vec<Vec<u8>>>>()?;
    let mut out = Vec::with_capacity(chunks.iter().map(Vec::len).sum());
    for chunk in chunks {
        out.extend_from_slice(&chunk);
    }
    Ok(out)
}

/// The columns of [`timeline`], in order.
pub const TIMELINE_HEADERS: [&str; 29] = [
    "trace",
    "conversation",
    "policy",
    "threshold",
    "request",
    "timestamp",
    "turn",
    "unrecorded",
    "framing",
    "system",
    "user",
    "assistant",
    "thinking",
    "hidden_reasoning",
    "server_side",
    "images",
    "tool_calls",
    "tool_summaries",
    "tool_contents",
    "placeholders",
    "context_tokens",
    "context_estimate",
    "prunable_tokens",
    "prunable_estimate",
    "pruned_tokens",
    "freed_tokens",
    "changed_results",
    "shared_prefix_tokens",
    "recorded_input_tokens",
];

/// One cell of a timeline row, borrowed from the run or the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cell<'a> {
    Text(&'a str),
    Number(u64),
    Empty,
}

impl Cell<'_> {
    fn text(self) -> String {
        match self {
            Cell::Text(t) => t.to_owned(),
            Cell::Number(n) => n.to_string(),
            Cell::Empty => String::new(),
        }
    }
}

/// One [`timeline`] row's cells as text.
pub fn timeline_row(run: &RunSummary, r: &RequestRow) -> [String; 29] {
    timeline_cells(run, r).map(Cell::text)
}

/// The cells of one timeline row, in [`TIMELINE_HEADERS`] order: the one list both [`timeline`]
/// and [`timeline_csv`] write.
fn timeline_cells<'a>(run: &'a RunSummary, r: &'a RequestRow) -> [Cell<'a>; 29] {
    let c = &r.categories;
    let n = |v: usize| Cell::Number(v as u64);
    [
        Cell::Text(&run.trace),
        Cell::Text(&run.conversation),
        Cell::Text(&run.policy),
        n(run.threshold),
        n(r.request),
        r.timestamp.as_deref().map_or(Cell::Empty, Cell::Text),
        n(r.turn),
        Cell::Number(c.unrecorded),
        Cell::Number(c.framing),
        Cell::Number(c.system),
        Cell::Number(c.user),
        Cell::Number(c.assistant),
        Cell::Number(c.thinking),
        Cell::Number(c.hidden_reasoning),
        Cell::Number(c.server_side),
        Cell::Number(c.images),
        Cell::Number(c.tool_calls),
        Cell::Number(c.tool_summaries),
        Cell::Number(c.tool_contents),
        Cell::Number(c.placeholders),
        Cell::Number(r.context_tokens),
        Cell::Number(r.context_estimate),
        Cell::Number(r.prunable_tokens),
        Cell::Number(r.prunable_estimate),
        Cell::Number(r.pruned_tokens),
        Cell::Number(r.freed_tokens),
        n(r.changed_results),
        Cell::Number(r.shared_prefix_tokens),
        r.recorded_input_tokens.map_or(Cell::Empty, Cell::Number),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::csv::render_tabular;
    use crate::result::Categories;
    use proptest::prelude::*;

    proptest! {
        /// Stats merged from parts are the stats of the whole, wherever the rows are cut (so a
        /// table drawn from a two-pass replay is the table drawn from held rows).
        #[test]
        fn stats_merged_from_parts_are_the_stats_of_the_whole(
            rows in prop::collection::vec(
                prop::collection::vec(prop_oneof!["[0-9]{0,6}%?", "[a-zé日\n]{0,8}", Just(String::new())], 0..5),
                0..12,
            ),
            cuts in prop::collection::vec(0usize..12, 0..4),
        ) {
            let headers = ["a", "bb", "ccc"];
            let whole = ColumnStats::of(&headers, rows.iter());
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(rows.len())).collect();
            cuts.push(0);
            cuts.push(rows.len());
            cuts.sort_unstable();
            let mut merged = ColumnStats::new(&headers);
            for pair in cuts.windows(2) {
                merged.merge(&ColumnStats::of(&headers, rows[pair[0]..pair[1]].iter()));
            }
            prop_assert_eq!(merged, whole);
        }
    }

    fn row(request: usize, timestamp: Option<&str>, recorded: Option<u64>) -> RequestRow {
        RequestRow {
            request,
            timestamp: timestamp.map(str::to_owned),
            turn: request / 2,
            categories: Categories {
                system: 7,
                tool_contents: 1_000_000 + request as u64,
                ..Default::default()
            },
            context_tokens: u64::MAX,
            changed_results: 3,
            recorded_input_tokens: recorded,
            ..Default::default()
        }
    }

    fn run(conversation: &str, rows: Option<Vec<RequestRow>>) -> RunSummary {
        RunSummary {
            trace: "dir/a b.jsonl".into(),
            conversation: conversation.into(),
            policy: "budget:max=100000,target=50000".into(),
            threshold: 256,
            timeline: rows,
            ..Default::default()
        }
    }

    fn parts(runs: &[RunSummary]) -> Vec<(&RunSummary, &[RequestRow])> {
        runs.iter().map(|r| (r, r.timeline.as_deref().unwrap_or_default())).collect()
    }

    #[test]
    fn the_streamed_timeline_csv_is_the_table_rendered_as_csv() {
        let runs = vec![
            run("plain", Some(vec![row(1, Some("2026-01-01T00:00:00.000Z"), Some(12)), row(2, None, None)])),
            run("no timeline", None),
            run("quoted \"id\", with a comma\nand a newline", Some(vec![row(1, Some("a,b"), Some(0))])),
            run("empty", Some(Vec::new())),
            run("last", Some((1..=40).map(|i| row(i, None, Some(i as u64))).collect())),
        ];
        let streamed = timeline_csv(&parts(&runs)).unwrap();
        let table = timeline(&runs);
        assert_eq!(table.rows.len(), 2 + 1 + 40);
        assert_eq!(
            String::from_utf8(streamed).unwrap(),
            String::from_utf8(render_tabular(&table).unwrap()).unwrap()
        );
    }

    #[test]
    fn timeline_cells_follow_the_headers() {
        let runs = [run("c", Some(vec![row(4, None, None)]))];
        let table = timeline(&runs);
        let cell = |name: &str| {
            let i = table.headers.iter().position(|h| *h == name).unwrap();
            table.rows[0][i].as_str()
        };
        assert_eq!(cell("conversation"), "c");
        assert_eq!(cell("threshold"), "256");
        assert_eq!(cell("request"), "4");
        assert_eq!(cell("turn"), "2");
        assert_eq!(cell("timestamp"), "");
        assert_eq!(cell("system"), "7");
        assert_eq!(cell("tool_contents"), "1000004");
        assert_eq!(cell("context_tokens"), u64::MAX.to_string());
        assert_eq!(cell("changed_results"), "3");
        assert_eq!(cell("recorded_input_tokens"), "");
        assert_eq!(table.rows[0].len(), TIMELINE_HEADERS.len());
    }

    #[test]
    fn the_runs_csv_says_how_each_conversation_was_counted() {
        use crate::model::{Calibration, Encoding, Method};
        let counted = |tokenizer: &str, calibration: Calibration| RunSummary {
            tokenizer: tokenizer.into(),
            calibration,
            ..run("c", None)
        };
        let runs = [
            counted(
                "provider",
                Calibration {
                    method: Method::Exact,
                    overhead: 9120,
                    tokenizer: Some(Encoding::Cl100k),
                    ..Calibration::NONE
                },
            ),
            counted(
                "provider",
                Calibration {
                    method: Method::Kinds,
                    ratio: 1.23456,
                    tokenizer: Some(Encoding::O200k),
                    ..Calibration::NONE
                },
            ),
            counted(
                "o200k",
                Calibration { method: Method::Default, overhead: 5, ratio: 1.2, ..Calibration::NONE },
            ),
            counted("estimate", Calibration::NONE),
        ];
        let table = runs_full(&runs);
        let tail = |row: &[String]| row[row.len() - 4..].join(",");
        assert_eq!(
            table.headers[table.headers.len() - 4..],
            ["counted_with", "calibration", "overhead", "ratio"]
        );
        let tails: Vec<String> = table.rows.iter().map(|r| tail(r)).collect();
        assert_eq!(
            tails,
            [
                "cl100k,exact,9120,1.000",
                "o200k,kinds,0,1.235",
                "o200k,default,5,1.200",
                "estimate,none,0,1.000"
            ]
        );
        let tokenizer = table.headers.iter().position(|h| *h == "tokenizer").unwrap();
        assert!(
            table.rows[..2].iter().all(|r| r[tokenizer] == "provider"),
            "the option stays in its own column"
        );
    }

    #[test]
    fn a_timeline_without_rows_is_its_header() {
        let streamed = timeline_csv(&[]).unwrap();
        assert_eq!(streamed, render_tabular(&timeline(&[])).unwrap());
        assert_eq!(String::from_utf8(streamed).unwrap().lines().count(), 1);
    }
}
