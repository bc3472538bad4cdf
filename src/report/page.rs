//! The report page's markup: `templates/report.html` (with the pieces in `templates/macros.html`)
//! rendered by askama, and the plain values it is filled with. askama because its templates are
//! checked and compiled into the binary (no template file is read at run time), it builds from crates
//! alone (no system package), and it is the usual choice; 0.14 is its newest release that builds with
//! the crate's `rust-version`. Every value that came from a log (names, paths, messages, table
//! cells) is escaped by askama with [`ReportHtml`], the report's own escaper registered for `.html`
//! in `templates/askama.toml`: askama's built-in one also writes `'` as `&#39;`, which would change
//! the page's bytes. Only the charts' SVG and the page's fixed style, script and cost text go in
//! unescaped. Nothing here touches files.

use std::fmt;

use askama::Template;

use super::headers::{self, Kind};
use crate::export::analysis::Section;
use crate::export::columns::Tabular;

/// Escapes `&`, `<`, `>` and `"`, and nothing else, in text and attribute values alike.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReportHtml;

impl askama::filters::Escaper for ReportHtml {
    fn write_escaped_str<W: fmt::Write>(&self, mut dest: W, text: &str) -> fmt::Result {
        let mut done = 0;
        for (i, b) in text.bytes().enumerate() {
            let entity = match b {
                b'&' => "&amp;",
                b'<' => "&lt;",
                b'>' => "&gt;",
                b'"' => "&quot;",
                _ => continue,
            };
            dest.write_str(&text[done..i])?;
            dest.write_str(entity)?;
            done = i + 1;
        }
        dest.write_str(&text[done..])
    }
}

/// A piece of [`Prose`]: plain text, or a `` `code` `` span shown as `<code>`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Span {
    /// The text, unescaped.
    pub text: String,
    /// Whether it was between backticks.
    pub code: bool,
}

/// Text written for the reader (findings, a section's lines), with its `` `code` `` spans (names,
/// options, as the terminal and Markdown outputs mark them) apart. Backticks that do not pair up are
/// left as they are, in one plain span.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Prose {
    /// The pieces, in order.
    pub spans: Vec<Span>,
}

impl Prose {
    /// `text` split at its backticks.
    pub fn new(text: &str) -> Prose {
        let parts: Vec<&str> = text.split('`').collect();
        if parts.len() % 2 == 0 {
            return Prose { spans: vec![Span { text: text.to_owned(), code: false }] };
        }
        let spans = parts
            .iter()
            .enumerate()
            .map(|(i, part)| Span { text: (*part).to_owned(), code: i % 2 == 1 })
            .collect();
        Prose { spans }
    }
}

/// A table cell, right-aligned when it reads as a number (or a percentage, or money).
#[derive(Debug)]
pub(crate) struct Cell {
    /// The text, unescaped.
    pub text: String,
    /// Whether it is a number.
    pub numeric: bool,
}

/// A column header: what the page shows, and the CSV's name of the column (its `title`).
#[derive(Debug)]
pub(crate) struct Header {
    /// The header shown.
    pub text: String,
    /// The column's name in the CSV and JSON files.
    pub name: &'static str,
}

/// A row of cells, and whether it is the recommended one (highlighted).
#[derive(Debug)]
pub(crate) struct Row {
    /// The cells.
    pub cells: Vec<Cell>,
    /// Whether the row is the recommendation's.
    pub recommended: bool,
}

/// A table longer than this many rows shows its first [`TOP_ROWS`] and folds the rest.
pub(crate) const FOLD_ABOVE: usize = 30;
/// Rows shown of a folded table.
pub(crate) const TOP_ROWS: usize = 15;

/// A table as the page shows it, in a box that scrolls sideways: human headers, numbers written
/// for reading ([`headers`](super::headers)), the recommended row marked and, past [`FOLD_ABOVE`]
/// rows, the rest folded under a `<details>`.
#[derive(Debug)]
pub(crate) struct Table {
    /// Column headers.
    pub headers: Vec<Header>,
    /// Rows shown.
    pub rows: Vec<Row>,
    /// Rows folded away.
    pub rest: Vec<Row>,
    /// What the fold's summary says.
    pub rest_summary: String,
}

/// How a [`Tabular`] is shown as a [`Table`].
pub(crate) struct Look<'a> {
    /// The unit of its cost columns.
    pub unit: &'a str,
    /// The CSV file that has every row, named when rows are folded.
    pub csv: Option<&'a str>,
    /// Whether a row (its cells, under the tabular's headers) is the recommended one.
    pub recommended: &'a dyn Fn(&[&str], &[String]) -> bool,
    /// Whether rows past [`FOLD_ABOVE`] are folded (not when the table is folded away already).
    pub fold: bool,
}

impl Default for Look<'_> {
    fn default() -> Self {
        Look { unit: "", csv: None, recommended: &|_, _| false, fold: true }
    }
}

impl Table {
    /// `t` as the page shows it, with `look`.
    pub fn new(t: &Tabular, look: &Look<'_>) -> Table {
        let columns: Vec<(String, Kind)> = t.headers.iter().map(|h| headers::column(h, look.unit)).collect();
        let mut rows = t.rows.iter().map(|row| {
            let cells = row
                .iter()
                .zip(&columns)
                .map(|(text, (_, kind))| Cell {
                    numeric: !text.is_empty() && text.trim_end_matches('%').parse::<f64>().is_ok(),
                    text: headers::cell(text, *kind, look.unit),
                })
                .collect();
            Row { cells, recommended: (look.recommended)(&t.headers, row) }
        });
        let shown = if look.fold && t.rows.len() > FOLD_ABOVE { TOP_ROWS } else { t.rows.len() };
        let top: Vec<Row> = rows.by_ref().take(shown).collect();
        let rest: Vec<Row> = rows.collect();
        let rest_summary = match look.csv {
            Some(csv) => format!("The other {} rows (every row is in {csv})", rest.len()),
            None => format!("The other {} rows", rest.len()),
        };
        Table {
            headers: t.headers.iter().zip(columns).map(|(name, (text, _))| Header { text, name }).collect(),
            rows: top,
            rest,
            rest_summary,
        }
    }
}

impl From<&Tabular> for Table {
    fn from(t: &Tabular) -> Table {
        Table::new(t, &Look::default())
    }
}

/// A section as the page shows it: a title, lines of prose, perhaps a table.
#[derive(Debug)]
pub(crate) struct SectionView {
    /// Title.
    pub title: Prose,
    /// Lines shown after the title.
    pub lines: Vec<Prose>,
    /// The table, if any.
    pub table: Option<Table>,
}

/// The page's views of `sections`, in order, their tables shown with `look`.
pub(crate) fn sections(sections: &[Section], look: &Look<'_>) -> Vec<SectionView> {
    sections
        .iter()
        .map(|s| SectionView {
            title: Prose::new(&s.title),
            lines: s.text.iter().map(|line| Prose::new(line)).collect(),
            table: s.table.as_ref().map(|t| Table::new(t, look)),
        })
        .collect()
}

/// A chart's `<figure>`: its SVG inline, its caption and links to both of its files.
#[derive(Debug)]
pub(crate) struct Figure {
    /// The chart as SVG, put in as it is.
    pub svg: String,
    /// The caption, unescaped.
    pub caption: String,
    /// The SVG file, relative to the page.
    pub svg_path: String,
    /// The PNG file, relative to the page.
    pub png_path: String,
}

/// What the timelines part says before its charts.
#[derive(Debug)]
pub(crate) enum TimelineIntro {
    /// No conversation was replayed.
    NoneReplayed,
    /// Conversations were replayed but none is drawn.
    NoneDrawn(Prose),
    /// Which conversations are drawn, under which policy.
    Drawn {
        /// Which conversations.
        which: Prose,
        /// The policy the areas show.
        policy: String,
    },
}

/// The top of the page: the recommendation with its numbers, what was analysed, the problems.
#[derive(Debug)]
pub(crate) struct Headline {
    /// The recommendation in one sentence.
    pub sentence: Prose,
    /// The recommended pair beside the sessions as recorded, when there is one.
    pub numbers: Option<Table>,
    /// What was analysed, one line each.
    pub analysed: Vec<Prose>,
}

/// The whole `index.html`, in page order.
#[derive(Template)]
#[template(path = "report.html", config = "templates/askama.toml")]
pub(crate) struct Page<'a> {
    /// The `<style>` contents.
    pub style: &'static str,
    /// The `<script>` contents.
    pub script: &'static str,
    /// How the cost tables are read, as markup.
    pub cost_model: &'static str,
    /// The top of the page.
    pub headline: Headline,
    /// The findings.
    pub findings: Vec<Prose>,
    /// The sweep chart.
    pub sweep_figure: Figure,
    /// The sweep's sections.
    pub sweep_sections: Vec<SectionView>,
    /// The policy chart.
    pub policies_figure: Figure,
    /// The comparison's and the cost's sections.
    pub policy_sections: Vec<SectionView>,
    /// What the folded prune events say they list.
    pub events_summary: String,
    /// The prune events.
    pub events_sections: Vec<SectionView>,
    /// The calibration chart.
    pub calibration_figure: Figure,
    /// The calibration's sections.
    pub calibration_sections: Vec<SectionView>,
    /// What the timelines part says first.
    pub timeline_intro: TimelineIntro,
    /// The timeline charts, in conversation order.
    pub timeline_figures: Vec<Figure>,
    /// The settings used.
    pub settings: Table,
    /// The files read.
    pub inputs: Table,
    /// Inputs that could not be read.
    pub errors: &'a [String],
    /// Non-fatal problems.
    pub warnings: &'a [String],
    /// The data files, with what each holds.
    pub data_files: [(&'static str, &'static str); 8],
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One piece of the page, through the same templates and escaper.
    #[derive(Template)]
    #[template(
        source = "{% import \"macros.html\" as m %}{% call m::prose(prose) %}|{% call m::table(table) %}",
        ext = "html",
        config = "templates/askama.toml"
    )]
    struct Piece {
        prose: Prose,
        table: Table,
    }

    fn piece(prose: &str) -> String {
        let t =
            Tabular { headers: vec!["policy", "savings"], rows: vec![vec!["<none>".into(), "5.0%".into()]] };
        let html = Piece { prose: Prose::new(prose), table: Table::from(&t) }.render().unwrap();
        assert!(html.contains("<td>&lt;none&gt;</td><td class=\"n\">5.0%</td>"), "{html}");
        html.split('|').next().unwrap().to_owned()
    }

    #[test]
    fn prose_marks_code_spans_and_leaves_odd_backticks_alone() {
        assert_eq!(piece("with `anthropic` prices"), "with <code>anthropic</code> prices");
        assert_eq!(piece("`<b>` & `x`"), "<code>&lt;b&gt;</code> &amp; <code>x</code>");
        assert_eq!(piece("a ` b"), "a ` b");
        assert_eq!(piece("no code"), "no code");
    }

    #[test]
    fn text_is_escaped_for_html_leaving_single_quotes() {
        assert_eq!(piece("a<b & \"c\">'d'"), "a&lt;b &amp; &quot;c&quot;&gt;'d'");
    }
}
