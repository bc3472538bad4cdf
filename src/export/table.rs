//! Terminal table: the run summaries (or the per-request timeline) followed by totals per policy,
//! in comfy-table's `UTF8_FULL_CONDENSED` look. Numbers are right-aligned. A table is fitted to the
//! width it is given ([`Fit`], the columns that matter: [`super::fit`]) or drawn wide, every column
//! as the CSV has them; the width is handed in, so the output is the same on a terminal and in a
//! pipe.
//!
//! The tables are drawn here rather than by comfy-table, byte for byte as comfy-table 8 draws them
//! with content arrangement disabled (a differential test below checks random tables against it):
//! comfy-table keeps every cell as a styled object split into lines, which for a per-request table
//! of 246 MB of traces (191,270 lines) took 1.8 GB and 5.4 s; drawn from the cells' widths straight
//! into one string it is the cells and the output.

use std::io::Write;

use anyhow::Result;
use unicode_width::UnicodeWidthStr;

use super::columns::{self, ColumnStats, Tabular};
use super::fit::{self, Fit, Layout};
use super::{Exporter, TimelineParts};
use crate::result::ReplayReport;

/// Writes terminal tables, fitted or wide.
pub struct TableExporter {
    fit: Fit,
    /// The fitted layout of the per-request table and the stats it was made from (made once in
    /// [`TimelineParts::head`], not again for each row).
    timeline: std::sync::OnceLock<(ColumnStats, Layout)>,
}

impl TableExporter {
    /// Tables drawn as `fit` says.
    pub fn new(fit: Fit) -> TableExporter {
        TableExporter { fit, timeline: std::sync::OnceLock::new() }
    }

    /// The fitted layout of the per-request table whose rows have `stats`, when fitted.
    fn timeline_layout(&self, stats: &ColumnStats) -> Option<std::borrow::Cow<'_, Layout>> {
        let Fit::Columns(width) = self.fit else { return None };
        if let Some((made_from, layout)) = self.timeline.get()
            && made_from == stats
        {
            return Some(std::borrow::Cow::Borrowed(layout));
        }
        let headers = &columns::TIMELINE_HEADERS;
        Some(std::borrow::Cow::Owned(Layout::new(headers, fit::view(headers), stats, width)))
    }
}

/// The characters of a table's lines: left end, fill (or padding), junction, right end.
struct Line(char, char, char, char);

const TOP: Line = Line('┌', '─', '┬', '┐');
const CONTENT: Line = Line('│', ' ', '┆', '│');
const HEADER_RULE: Line = Line('╞', '═', '╪', '╡');
const BOTTOM: Line = Line('└', '─', '┴', '┘');

/// Renders one table: a header row, a rule, the rows, in a box. A cell holding newlines takes as
/// many lines as it has; a column is as wide as its widest line (at least one character) plus one
/// space each side. A column whose every cell is a number or empty is right-aligned, its header
/// too.
pub fn render_tabular(t: &Tabular) -> String {
    super::drawn(|out| write_tabular(t, out))
}

/// [`render_tabular`] written to `out`.
pub fn write_tabular(t: &Tabular, out: &mut dyn Write) -> std::io::Result<()> {
    write_rows(&t.headers, || t.rows.iter(), out)
}

/// [`render_fitted`] written to `out`.
pub fn write_fitted_tabular(t: &Tabular, fit: Fit, out: &mut dyn Write) -> std::io::Result<()> {
    write_fitted(&t.headers, || t.rows.iter(), fit, out)
}

/// One table drawn as `fit` says: [`render_tabular`] when wide, else the columns its
/// [`fit::view`] keeps, fitted to the width ([`Layout::new`]).
pub fn render_fitted(t: &Tabular, fit: Fit) -> String {
    super::drawn(|out| write_fitted_tabular(t, fit, out))
}

/// [`write_rows`] drawn as `fit` says (the rows walked twice as there).
pub fn write_fitted<R, I>(
    headers: &[&'static str],
    rows: impl Fn() -> I,
    fit: Fit,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()>
where
    R: AsRef<[String]>,
    I: Iterator<Item = R>,
{
    let Fit::Columns(width) = fit else { return write_rows(headers, rows, out) };
    let stats = ColumnStats::of(headers, rows());
    let layout = Layout::new(headers, fit::view(headers), &stats, width);
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    write_head(&layout.header_cells(), &layout.stats, &mut out)?;
    let mut line = String::new();
    for r in rows() {
        line.clear();
        draw_row(&mut line, &layout.cells(r.as_ref()), &layout.stats);
        out.write_all(line.as_bytes())?;
    }
    write_foot(&layout.stats, &mut out)?;
    out.flush()
}

/// `text` as lines no wider than `fit` (each of its lines wrapped at the width), each ended by a
/// newline; as it is when wide.
pub fn wrapped(text: &str, fit: Fit) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    for line in text.split('\n') {
        match fit {
            Fit::Columns(width) => {
                for part in fit::wrap(line, width) {
                    out.push_str(&part);
                    out.push('\n');
                }
            }
            Fit::Wide => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// [`render_tabular`] of rows made on demand, written to `out` as it is drawn (without a trailing
/// newline). The rows are walked twice, once to size and align the columns and once to draw them,
/// so that a table of every request holds one row's cells at a time, not all of them.
pub fn write_rows<R, I>(
    headers: &[&str],
    rows: impl Fn() -> I,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()>
where
    R: AsRef<[String]>,
    I: Iterator<Item = R>,
{
    let stats = ColumnStats::of(headers, rows());
    let mut out = std::io::BufWriter::with_capacity(1 << 16, out);
    write_head(headers, &stats, &mut out)?;
    let mut line = String::new();
    for r in rows() {
        line.clear();
        draw_row(&mut line, r.as_ref(), &stats);
        out.write_all(line.as_bytes())?;
    }
    write_foot(&stats, &mut out)?;
    out.flush()
}

/// The top of a table whose rows have `stats`: its frame, the header row and the rule under it.
pub fn write_head<S: AsRef<str>>(
    headers: &[S],
    stats: &ColumnStats,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut line = String::new();
    rule(&mut line, &TOP, &stats.widths);
    line.push('\n');
    draw_row(&mut line, headers, stats);
    rule(&mut line, &HEADER_RULE, &stats.widths);
    line.push('\n');
    out.write_all(line.as_bytes())
}

/// The bottom of the frame (without a trailing newline).
pub fn write_foot(stats: &ColumnStats, out: &mut dyn Write) -> std::io::Result<()> {
    let mut line = String::new();
    rule(&mut line, &BOTTOM, &stats.widths);
    out.write_all(line.as_bytes())
}

/// A horizontal line across every column.
fn rule(out: &mut String, line: &Line, widths: &[usize]) {
    out.push(line.0);
    for (i, &w) in widths.iter().enumerate() {
        if i > 0 {
            out.push(line.2);
        }
        out.extend(std::iter::repeat_n(line.1, w + 2));
    }
    out.push(line.3);
}

/// One row of a table whose rows have `stats`: as many lines as its tallest cell, each ended by a
/// newline; a cell missing (a short row) or out of lines is blank.
pub fn draw_row<S: AsRef<str>>(out: &mut String, cells: &[S], stats: &ColumnStats) {
    let widths = &stats.widths;
    let mut height = cells.iter().map(|c| c.as_ref().split('\n').count()).max().unwrap_or(0);
    if cells.len() < widths.len() {
        height = height.max(1);
    }
    if height == 0 {
        return;
    }
    let mut lines: Vec<std::str::Split<'_, char>> = cells.iter().map(|c| c.as_ref().split('\n')).collect();
    for _ in 0..height {
        out.push(CONTENT.0);
        for (i, &w) in widths.iter().enumerate() {
            if i > 0 {
                out.push(CONTENT.2);
            }
            let Some(text) = lines.get_mut(i).and_then(Iterator::next) else {
                out.extend(std::iter::repeat_n(' ', w + 2));
                continue;
            };
            let text = columns::terminal_safe(text);
            let pad = w.saturating_sub(text.width());
            let (left, trailing) = if stats.right(i) { (pad, 0) } else { (0, pad) };
            out.extend(std::iter::repeat_n(' ', 1 + left));
            out.push_str(&text);
            out.extend(std::iter::repeat_n(' ', trailing + 1));
        }
        out.push(CONTENT.3);
        out.push('\n');
    }
}

impl Exporter for TableExporter {
    fn write(&self, report: &ReplayReport, per_request: bool, out: &mut dyn Write) -> Result<()> {
        if per_request {
            return super::write_timeline(self, report, out);
        }
        write_fitted_tabular(&columns::runs_brief(&report.runs), self.fit, out)?;
        write_totals(report, self.fit, out)
    }
}

impl TimelineParts for TableExporter {
    fn head(&self, stats: &ColumnStats, out: &mut dyn Write) -> std::io::Result<()> {
        let Some(layout) = self.timeline_layout(stats) else {
            return write_head(&columns::TIMELINE_HEADERS, stats, out);
        };
        write_head(&layout.header_cells(), &layout.stats, out)?;
        let _ = self.timeline.set((stats.clone(), layout.into_owned()));
        Ok(())
    }

    fn draw_row(&self, stats: &ColumnStats, cells: &[String], line: &mut String) {
        match self.timeline_layout(stats) {
            Some(layout) => draw_row(line, &layout.cells(cells), &layout.stats),
            None => draw_row(line, cells, stats),
        }
    }

    fn tail(&self, stats: &ColumnStats, report: &ReplayReport, out: &mut dyn Write) -> Result<()> {
        match self.timeline_layout(stats) {
            Some(layout) => write_foot(&layout.stats, out)?,
            None => write_foot(stats, out)?,
        }
        write_totals(report, self.fit, out)
    }
}

/// The totals per policy, under the runs' table.
fn write_totals(report: &ReplayReport, fit: Fit, out: &mut dyn Write) -> Result<()> {
    out.write_all(b"\n\nTotals per policy (all conversations)\n")?;
    write_fitted_tabular(&columns::totals(report), fit, out)?;
    out.write_all(b"\n")?;
    if let Some(t) = super::compaction::runs(&report.runs) {
        out.write_all(b"\nCompactions per run (runs that compacted)\n")?;
        write_fitted_tabular(&t, fit, out)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// How comfy-table 8 draws the same table (the renderer this one replaced).
    fn comfy(t: &Tabular) -> String {
        use comfy_table::presets::UTF8_FULL_CONDENSED;
        use comfy_table::{CellAlignment, ContentArrangement, Table};
        let mut table = Table::new();
        table.load_style(UTF8_FULL_CONDENSED).set_content_arrangement(ContentArrangement::Disabled);
        table.set_header(t.headers.iter().copied());
        for row in &t.rows {
            table.add_row(row.iter().map(String::as_str));
        }
        for (i, column) in table.column_iter_mut().enumerate() {
            let numeric = t.rows.iter().all(|r| r[i].is_empty() || columns::looks_numeric(&r[i]));
            if numeric && !t.rows.is_empty() {
                column.set_cell_alignment(CellAlignment::Right);
            }
        }
        table.to_string()
    }

    const HEADERS: [&str; 5] = ["trace", "tokens", "share", "ツール", "note"];

    fn cell() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            (0u64..1_000_000).prop_map(|n| n.to_string()),
            (-100.0f64..100.0).prop_map(|v| format!("{v:.1}%")),
            "[a-z/._-]{1,12}",
            "[a-zé日本語 ]{0,6}",
            "[a-z]{0,3}\n[a-z]{0,5}(\n[0-9]{0,2})?",
        ]
    }

    fn table() -> impl Strategy<Value = Tabular> {
        (1usize..=5).prop_flat_map(|columns| {
            prop::collection::vec(prop::collection::vec(cell(), columns), 0..8)
                .prop_map(move |rows| Tabular { headers: HEADERS[..columns].to_vec(), rows })
        })
    }

    proptest! {
        #[test]
        fn tables_are_drawn_as_comfy_table_draws_them(t in table()) {
            prop_assert_eq!(render_tabular(&t), comfy(&t));
        }
    }

    #[test]
    fn control_characters_from_a_log_are_escaped_and_the_frame_stays_aligned() {
        let t = Tabular {
            headers: vec!["conversation", "tokens"],
            rows: vec![
                vec!["\u{1b}]0;pwned\u{7}a\tb\r".into(), "1".into()],
                vec!["plain".into(), "22".into()],
            ],
        };
        let drawn = render_tabular(&t);
        assert!(!drawn.chars().any(|c| c.is_control() && c != '\n'), "{drawn:?}");
        assert!(drawn.contains("\\u{1b}]0;pwned\\u{7}a\\u{9}b\\u{d}"), "{drawn}");
        // Every line of the frame is as wide as the others.
        let widths: Vec<usize> = drawn.lines().map(|l| l.width()).collect();
        assert!(widths.windows(2).all(|w| w[0] == w[1]), "{widths:?}\n{drawn}");
    }

    #[test]
    fn a_numeric_column_is_right_aligned_header_included() {
        let t = Tabular {
            headers: vec!["name", "n"],
            rows: vec![vec!["a".into(), "10".into()], vec!["bb".into(), "2".into()]],
        };
        let drawn = render_tabular(&t);
        assert_eq!(
            drawn,
            "┌──────┬────┐\n│ name ┆  n │\n╞══════╪════╡\n│ a    ┆ 10 │\n│ bb   ┆  2 │\n└──────┴────┘"
        );
        assert_eq!(drawn, comfy(&t));
    }
}
