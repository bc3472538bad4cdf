//! Fitting a terminal table to the terminal: which columns a table keeps, their headers in words
//! with units, numbers with thousands separators, and the widths that make the whole table no wider
//! than the terminal (long paths shortened in the middle, keeping the file name; long text cut in
//! the middle or wrapped onto more lines). [`Fit::Wide`] draws every column as the CSV has them.
//!
//! This is pure layout: the width is handed in (the command line reads `COLUMNS`), nothing here
//! reads the environment or writes anywhere. Only the terminal table uses it; CSV, JSON and
//! Markdown keep every column and their bytes.

use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::columns::ColumnStats;

/// How wide a terminal table may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Every column, as wide as its widest cell (`--wide`).
    Wide,
    /// The columns that matter, the table no wider than this many terminal columns where it can be.
    Columns(usize),
}

/// The width when the terminal's is not known (`COLUMNS` unset or not a number).
pub const DEFAULT_WIDTH: usize = 100;

/// The narrowest width a table is fitted to: a smaller `COLUMNS` is taken as this.
pub const MIN_WIDTH: usize = 40;

impl Default for Fit {
    fn default() -> Fit {
        Fit::Columns(DEFAULT_WIDTH)
    }
}

impl Fit {
    /// `--wide`, or the width `COLUMNS` gives (its value, if any, passed in): a positive number,
    /// at least [`MIN_WIDTH`]; [`DEFAULT_WIDTH`] when it is unset, empty or not a number.
    pub fn new(wide: bool, columns: Option<&str>) -> Fit {
        if wide {
            return Fit::Wide;
        }
        match columns.and_then(|c| c.trim().parse::<usize>().ok()) {
            Some(n) if n > 0 => Fit::Columns(n.max(MIN_WIDTH)),
            _ => Fit::default(),
        }
    }
}

/// How a column's cells are shown, and whether they may be made narrower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A file path: shortened in the middle, keeping the file name.
    Path,
    /// An identifier (a conversation, a tool): shortened in the middle.
    Text,
    /// Words or a spec (a policy, a note): wrapped onto more lines ([`wrap`]).
    Wrap,
    /// Shown as it is, never narrowed (a mark, a timestamp, a short word).
    Fixed,
    /// A number: thousands separated, never narrowed.
    Number,
    /// An amount in US dollars: `$` and thousands separated, never narrowed.
    Dollars,
}

impl Kind {
    /// Whether the column may be drawn narrower than its widest cell.
    fn narrows(self) -> bool {
        matches!(self, Kind::Path | Kind::Text | Kind::Wrap)
    }

    /// How narrow the column may become, at least (and no narrower than its header): a path
    /// keeps room for a file name.
    fn floor(self) -> usize {
        match self {
            Kind::Path => 24,
            Kind::Text => 10,
            Kind::Wrap => 12,
            Kind::Fixed | Kind::Number | Kind::Dollars => 0,
        }
    }
}

/// The header in words (with its unit; a `\n` starts its second line) and the kind of a column,
/// by its name (the CSV and JSON header).
pub fn column(name: &'static str) -> (&'static str, Kind) {
    use Kind::*;
    match name {
        "trace" => ("trace", Path),
        "conversation" => ("conversation", Text),
        "tool" | "key" | "estimator" | "format" | "provider" => (name, Text),
        "policy" | "note" => (name, Wrap),
        "timestamp" | "mark" | "cache" | "group" | "basis" | "calibration" | "tokenizer_exact" => {
            (name, Fixed)
        }
        "pays_off" => ("pays\noff", Fixed),
        "why_it_lost" => ("why it lost", Wrap),
        "meets_constraints" => ("meets\nconstraints", Fixed),
        "differs" => (name, Fixed),
        "extra_cost_usd" => ("extra\n(USD)", Dollars),
        "versus_overall" => ("versus\noverall", Fixed),
        "cost_usd" => ("cost\n(USD)", Dollars),
        "output_cost_usd" => ("output\n(USD)", Dollars),
        _ => (number_header(name), Number),
    }
}

/// The header in words of a numeric column (its name when it has none).
fn number_header(name: &'static str) -> &'static str {
    match name {
        "threshold" => "threshold\n(bytes)",
        "context_tokens" => "context\n(tokens)",
        "peak_context_tokens" => "peak\n(tokens)",
        "total_input_tokens" => "input\n(tokens)",
        "pruned_tokens" => "pruned\n(tokens)",
        "freed_tokens" => "freed\n(tokens)",
        "prune_events" => "prune\nevents",
        "recorded_input_tokens" => "recorded\n(tokens)",
        "tool_results" => "tool\nresults",
        "split_results" => "split\nresults",
        "split_share" => "split\nshare",
        "summary_tokens" => "summaries\n(tokens)",
        "summarized_tokens" => "summarised\n(tokens)",
        "summarization_input_tokens" => "summary call\ninput",
        "summarization_output_tokens" => "summary call\noutput",
        "content_tokens" => "content\n(tokens)",
        "overhead_tokens" => "overhead\n(tokens)",
        "output_tokens" => "output\n(tokens)",
        "output_share" => "output\nshare",
        "recommended_threshold" => "recommended\n(bytes)",
        "tool_savings" => "tool\nsavings",
        "best_threshold" => "best\n(bytes)",
        "best_tool_savings" => "best tool\nsavings",
        "over_window" => "over\nwindow",
        "cost_change" => "cost\nchange",
        "cold_requests" => "cold\nrequests",
        "read_tokens" => "read\n(tokens)",
        "write_tokens" => "written\n(tokens)",
        "rewritten_tokens" => "rewritten\n(tokens)",
        "events_paying_off" => "events\npaying off",
        "changed_results" => "changed\nresults",
        "rewrite_cost" => "rewrite\ncost",
        "break_even_requests" => "break-even\n(requests)",
        "later_requests" => "later\nrequests",
        "estimate" => "estimate\n(tokens)",
        "bytes_per_token" => "bytes per\ntoken",
        "mean_abs_error" => "mean\n|error|",
        "calibrated_mean_abs_error" => "calibrated\nmean |error|",
        "recorded_requests" => "recorded\nrequests",
        "fitted_conversations" => "fitted\nconversations",
        "median_rel" => "median\n|error|",
        "p90_rel" => "p90\n|error|",
        "max_rel" => "max\n|error|",
        "total_ratio" => "total\nratio",
        "calibrated_requests" => "calibrated\nrequests",
        "calibrated_median" => "calibrated\nmedian",
        "calibrated_p90" => "calibrated\np90",
        "calibrated_max" => "calibrated\nmax",
        "calibrated_total_ratio" => "calibrated\ntotal ratio",
        "replayed" => "replayed\n(tokens)",
        "recorded" => "recorded\n(tokens)",
        "fitted" => "fitted\n(tokens)",
        "error" => "error",
        "relative_error" => "relative\nerror",
        "input_tokens" => "input\n(tokens)",
        "reuse_share" => "reuse\nshare",
        "own_threshold" => "own\n(bytes)",
        "extra_input_tokens" => "extra input\n(tokens)",
        "calibrated" => "calibrated\n(tokens)",
        other => other,
    }
}

/// The columns a table keeps in a fitted terminal table: `keep`, in that order, out of a table
/// with exactly `headers`. When even these do not fit, the last ones are left out first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// Every column of the table, as its CSV has them.
    pub headers: &'static [&'static str],
    /// The columns kept, most important first.
    pub keep: &'static [&'static str],
}

/// A table's columns as drawn: which columns of its rows, under which headers, how wide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The index in a row of each column drawn.
    pub source: Vec<usize>,
    /// Their kinds.
    pub kinds: Vec<Kind>,
    /// Their headers in words.
    pub headers: Vec<&'static str>,
    /// The stats the columns are drawn with: their widths once fitted, whether numeric.
    pub stats: ColumnStats,
}

impl Layout {
    /// The layout of a table with `headers`, whose rows have `stats` (made over the rows as they
    /// are, [`ColumnStats::of`]), fitted into `width` columns: the columns of `view` (every column,
    /// in order, without one), the narrowable ones narrowed (widest first, never under their
    /// floor), then the last ones left out until the table fits. One column is always drawn.
    pub fn new(headers: &[&'static str], view: Option<&View>, stats: &ColumnStats, width: usize) -> Layout {
        let mut source: Vec<usize> = match view {
            Some(v) => v.keep.iter().filter_map(|k| headers.iter().position(|h| h == k)).collect(),
            None => (0..headers.len()).collect(),
        };
        if let Some(v) = view {
            super::compaction::keep_beside(headers, v.headers.len(), &mut source);
        }
        if source.is_empty() {
            source = (0..headers.len().min(1)).collect();
        }
        loop {
            let layout = Layout::natural(headers, &source, stats);
            if let Some(fitted) = layout.narrowed(width) {
                return fitted;
            }
            if source.len() <= 1 {
                let narrowest = layout.kinds.iter().zip(&layout.stats.widths).map(|(k, &w)| narrowest(*k, w));
                let stats = ColumnStats { widths: narrowest.collect(), ..layout.stats.clone() };
                return Layout { stats, ..layout };
            }
            source.pop();
        }
    }

    /// The columns `source` at their natural widths: the widest of the header in words and the
    /// cells (numbers with their separators).
    fn natural(headers: &[&'static str], source: &[usize], stats: &ColumnStats) -> Layout {
        let mut kinds = Vec::with_capacity(source.len());
        let mut words = Vec::with_capacity(source.len());
        let mut drawn = ColumnStats { rows: stats.rows, ..Default::default() };
        for &i in source {
            let (header, kind) = column(headers[i]);
            let cells = match kind {
                Kind::Number => stats.grouped.get(i).copied().unwrap_or(0),
                // `$` before a number (the widest cell is one).
                Kind::Dollars => stats.grouped.get(i).map_or(0, |&w| if w > 0 { w + 1 } else { 0 }),
                _ => stats.cells.get(i).copied().unwrap_or(0),
            };
            let header_width = header.split('\n').map(UnicodeWidthStr::width).max().unwrap_or(0);
            drawn.widths.push(cells.max(header_width).max(1));
            drawn.numeric.push(stats.numeric.get(i).copied().unwrap_or(true));
            drawn.cells.push(cells);
            drawn.grouped.push(cells);
            kinds.push(kind);
            words.push(header);
        }
        Layout { source: source.to_vec(), kinds, headers: words, stats: drawn }
    }

    /// How wide the table is drawn: each column plus a space each side, a line between columns
    /// and one at each end.
    pub fn table_width(widths: &[usize]) -> usize {
        widths.iter().sum::<usize>() + 3 * widths.len() + 1
    }

    /// This layout with its narrowable columns narrowed until the table is `width` wide at most,
    /// or `None` when even at their floors it is wider.
    fn narrowed(&self, width: usize) -> Option<Layout> {
        let natural = &self.stats.widths;
        if Layout::table_width(natural) <= width {
            return Some(self.clone());
        }
        // Never under the header's widest line either.
        let header = |h: &&str| h.split('\n').map(UnicodeWidthStr::width).max().unwrap_or(0);
        let floors: Vec<usize> = (self.kinds.iter().zip(natural).zip(self.headers.iter().map(header)))
            .map(|((k, &w), h)| narrowest(*k, w).max(h.min(w)))
            .collect();
        if Layout::table_width(&floors) > width {
            return None;
        }
        // The highest level every narrowable column is cut down to (not under its floor) that
        // fits; the columns left at the level then share what is left over, left first.
        let at = |level: usize| -> Vec<usize> {
            let cut =
                |(k, (&w, &f)): (&Kind, (&usize, &usize))| if k.narrows() { w.min(level.max(f)) } else { w };
            self.kinds.iter().zip(natural.iter().zip(&floors)).map(cut).collect()
        };
        let (mut low, mut high) = (0, natural.iter().copied().max().unwrap_or(0));
        while low < high {
            let mid = (low + high).div_ceil(2);
            if Layout::table_width(&at(mid)) <= width { low = mid } else { high = mid - 1 }
        }
        let mut widths = at(low);
        let mut spare = width - Layout::table_width(&widths);
        for (w, (&n, k)) in widths.iter_mut().zip(natural.iter().zip(&self.kinds)) {
            if spare > 0 && k.narrows() && *w < n {
                *w += 1;
                spare -= 1;
            }
        }
        let stats = ColumnStats { widths, ..self.stats.clone() };
        Some(Layout { stats, ..self.clone() })
    }

    /// The header row's cells.
    pub fn header_cells(&self) -> Vec<String> {
        self.headers.iter().zip(&self.stats.widths).map(|(h, &w)| cut_lines(h, w, Kind::Text)).collect()
    }

    /// One row's cells as drawn: the kept columns, control characters escaped, numbers grouped,
    /// narrowed text shortened or wrapped to its column's width.
    pub fn cells<S: AsRef<str>>(&self, row: &[S]) -> Vec<String> {
        let column = |(&i, (&kind, &w)): (&usize, (&Kind, &usize))| {
            let raw = row.get(i).map_or("", AsRef::as_ref);
            let shown = match kind {
                Kind::Number => raw.split('\n').map(group_thousands).collect::<Vec<_>>().join("\n"),
                Kind::Dollars if looks_plain_number(raw) => format!("${}", group_thousands(raw)),
                _ => raw.to_owned(),
            };
            let safe: Vec<String> =
                shown.split('\n').map(|l| super::columns::terminal_safe(l).into_owned()).collect();
            cut_lines(&safe.join("\n"), w, kind)
        };
        self.source.iter().zip(self.kinds.iter().zip(&self.stats.widths)).map(column).collect()
    }
}

/// The narrowest a column of `kind` whose natural width is `natural` is drawn.
fn narrowest(kind: Kind, natural: usize) -> usize {
    if kind.narrows() { natural.min(kind.floor()) } else { natural }
}

/// Each line of `text` made no wider than `width` the way `kind` is narrowed.
fn cut_lines(text: &str, width: usize, kind: Kind) -> String {
    if text.split('\n').all(|l| l.width() <= width) {
        return text.to_owned();
    }
    let cut = |line: &str| match kind {
        Kind::Path => shorten_path(line, width),
        Kind::Wrap => wrap(line, width).join("\n"),
        _ => shorten_middle(line, width),
    };
    text.split('\n').map(cut).collect::<Vec<_>>().join("\n")
}

/// Whether `cell` is a plain decimal number: an optional minus, digits, optionally a point and
/// digits, optionally a trailing `%`.
pub fn looks_plain_number(cell: &str) -> bool {
    let body = cell.strip_suffix('%').unwrap_or(cell);
    let body = body.strip_prefix('-').unwrap_or(body);
    let (int, frac) = body.split_once('.').unwrap_or((body, "0"));
    !int.is_empty()
        && !frac.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// How many separators [`group_thousands`] adds to `cell`.
pub fn separators(cell: &str) -> usize {
    if !looks_plain_number(cell) {
        return 0;
    }
    let digits = cell.trim_start_matches('-').split(['.', '%']).next().map_or(0, str::len);
    digits.saturating_sub(1) / 3
}

/// A plain number with a comma between each group of three digits of its whole part
/// (`1243308` → `1,243,308`, `-1234.5` → `-1,234.5`); anything else as it is.
pub fn group_thousands(cell: &str) -> String {
    if separators(cell) == 0 {
        return cell.to_owned();
    }
    let (sign, rest) = cell.strip_prefix('-').map_or(("", cell), |r| ("-", r));
    let split = rest.find(['.', '%']).unwrap_or(rest.len());
    let (int, tail) = rest.split_at(split);
    let mut out = String::with_capacity(cell.len() + int.len() / 3);
    out.push_str(sign);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out.push_str(tail);
    out
}

/// The first characters of `text` that fit in `width` columns.
fn head(text: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices() {
        used += c.width().unwrap_or(0);
        if used > width {
            return &text[..i];
        }
    }
    text
}

/// The last characters of `text` that fit in `width` columns.
fn tail(text: &str, width: usize) -> &str {
    let mut used = 0;
    for (i, c) in text.char_indices().rev() {
        used += c.width().unwrap_or(0);
        if used > width {
            return &text[i + c.len_utf8()..];
        }
    }
    text
}

/// `text` no wider than `width`: its start and its end with `…` between them.
pub fn shorten_middle(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_owned();
    }
    if width == 0 {
        return String::new();
    }
    let room = width - 1;
    let end = tail(text, room / 2);
    let start = head(text, room - end.width());
    format!("{start}…{end}")
}

/// A path no wider than `width`, its file name kept whole where it can be: its start, `…` and
/// the file name (`../shared/…/agent-a485154.jsonl`); or `…/` and the file name; or the file name
/// alone shortened in the middle ([`shorten_middle`]).
pub fn shorten_path(path: &str, width: usize) -> String {
    if path.width() <= width {
        return path.to_owned();
    }
    let Some(slash) = path.rfind('/') else { return shorten_middle(path, width) };
    let (name, file) = (&path[slash..], &path[slash + 1..]);
    let name_width = name.width();
    if name_width + 4 <= width {
        return format!("{}…{name}", head(path, width - 1 - name_width));
    }
    if name_width < width {
        return format!("…{name}");
    }
    shorten_middle(file, width)
}

/// `text` in lines no wider than `width`: broken after a space, a comma or a colon where it can
/// be, else inside a word; spaces at a break are dropped.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut rest = text;
    while rest.width() > width {
        let fits = head(rest, width);
        // After the last space or comma that fits, or else where the width ends (at least one
        // character, so that a character wider than the width still moves on).
        let at = fits.rfind([' ', ',', ':']).map(|i| i + 1).filter(|&i| i > 0 && fits[..i].trim_end() != "");
        let cut = at.unwrap_or_else(|| fits.len().max(rest.chars().next().map_or(0, char::len_utf8)));
        lines.push(rest[..cut].trim_end().to_owned());
        rest = rest[cut..].trim_start();
    }
    if !rest.is_empty() || lines.is_empty() {
        lines.push(rest.to_owned());
    }
    lines
}

/// The columns each terminal table keeps when fitted (docs/cli.md lists them), most important
/// first; `--wide` draws all of them.
pub const VIEWS: [View; 17] = {
    use super::analysis as a;
    use super::columns as c;
    use super::compaction as k;
    use super::recommend as m;
    use super::reconcile as r;
    [
        View {
            headers: &c::RUNS_BRIEF_HEADERS,
            keep: &[
                "trace",
                "conversation",
                "policy",
                "peak_context_tokens",
                "total_input_tokens",
                "prune_events",
                "recorded_input_tokens",
            ],
        },
        View {
            headers: &c::TOTALS_HEADERS,
            keep: &[
                "policy",
                "conversations",
                "requests",
                "peak_context_tokens",
                "total_input_tokens",
                "savings",
                "pruned_tokens",
                "prune_events",
            ],
        },
        View {
            headers: &c::TIMELINE_HEADERS,
            keep: &[
                "trace",
                "conversation",
                "policy",
                "request",
                "context_tokens",
                "pruned_tokens",
                "freed_tokens",
                "recorded_input_tokens",
            ],
        },
        View {
            headers: &k::RUNS_HEADERS,
            keep: &[
                "trace",
                "conversation",
                "policy",
                "compactions",
                "summary_tokens",
                "summarization_input_tokens",
                "summarization_output_tokens",
                "summarized_tokens",
            ],
        },
        View {
            headers: &a::SWEEP_HEADERS,
            keep: &[
                "threshold",
                "split_share",
                "peak_context_tokens",
                "total_input_tokens",
                "savings",
                "cost_usd",
                "prune_events",
                "mark",
            ],
        },
        View {
            headers: &a::SWEEP_TOOL_HEADERS,
            keep: &[
                "tool",
                "output_share",
                "recommended_threshold",
                "tool_savings",
                "best_threshold",
                "best_tool_savings",
                "versus_overall",
                "results",
                "output_tokens",
            ],
        },
        View {
            headers: &a::COMPARE_HEADERS,
            keep: &[
                "policy",
                "total_input_tokens",
                "savings",
                "prune_events",
                "over_window",
                "cost_change",
                "cost_usd",
                "note",
            ],
        },
        View {
            headers: &a::COST_HEADERS,
            keep: &[
                "policy",
                "cost",
                "cost_change",
                "cost_usd",
                "read_tokens",
                "write_tokens",
                "rewritten_tokens",
                "freed_tokens",
                "prune_events",
                "events_paying_off",
                "note",
            ],
        },
        View {
            headers: &a::COST_EVENT_HEADERS,
            keep: &[
                "trace",
                "conversation",
                "policy",
                "request",
                "freed_tokens",
                "rewritten_tokens",
                "pays_off",
                "break_even_requests",
                "cache",
            ],
        },
        View {
            headers: &a::CALIBRATION_HEADERS,
            keep: &[
                "estimator",
                "group",
                "key",
                "results",
                "tokens",
                "estimate",
                "error",
                "bytes_per_token",
                "mean_abs_error",
                "calibrated_mean_abs_error",
            ],
        },
        View {
            headers: &r::FIT_HEADERS,
            keep: &[
                "trace",
                "conversation",
                "requests",
                "median_rel",
                "p90_rel",
                "max_rel",
                "total_ratio",
                "calibrated_median",
            ],
        },
        View {
            headers: &r::FORMAT_HEADERS,
            keep: &[
                "format",
                "conversations",
                "recorded_requests",
                "median_rel",
                "p90_rel",
                "max_rel",
                "calibrated_median",
                "calibrated_p90",
            ],
        },
        View {
            headers: &r::REQUEST_HEADERS,
            keep: &[
                "trace",
                "conversation",
                "request",
                "replayed",
                "recorded",
                "fitted",
                "error",
                "relative_error",
            ],
        },
        View {
            headers: &m::RUNNERS_UP_HEADERS,
            keep: &["policy", "threshold", "extra_cost_usd", "extra_input_tokens", "why_it_lost"],
        },
        View {
            headers: &m::TOOLS_HEADERS,
            keep: &[
                "tool",
                "own_threshold",
                "cost_change",
                "cost_usd",
                "differs",
                "output_tokens",
                "results",
            ],
        },
        View {
            headers: &m::BEST_HEADERS,
            keep: &[
                "policy",
                "threshold",
                "mark",
                "cost_usd",
                "cost_change",
                "savings",
                "reuse_share",
                "peak_context_tokens",
                "meets_constraints",
                "input_tokens",
                "prune_events",
            ],
        },
        View {
            headers: &m::CANDIDATE_HEADERS,
            keep: &[
                "policy",
                "threshold",
                "cost_usd",
                "cost_change",
                "savings",
                "reuse_share",
                "peak_context_tokens",
                "meets_constraints",
                "input_tokens",
                "prune_events",
            ],
        },
    ]
};

/// The view of the table with exactly these `headers`, or these and the compaction columns
/// ([`super::compaction::append`]), if it has one (a table without is fitted with all its columns,
/// the last left out first).
pub fn view(headers: &[&str]) -> Option<&'static View> {
    VIEWS.iter().find(|v| v.headers == headers || v.headers == super::compaction::without(headers))
}

#[cfg(test)]
mod tests;
