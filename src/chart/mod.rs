//! Charts drawn with plotters, as SVG and PNG, one file per chart.
//!
//! Each chart is a plain data struct made by a `prepare` function (unit-tested without drawing) and
//! a [`Chart::draw`] that returns `Result` and never unwraps (the pattern of criterion's `plot/`).
//! This module holds what they share: style constants, every output path, the font and the two
//! renderers. Nothing needs a system package at build or run time: text is laid out with ab_glyph
//! from an embedded DejaVu Sans (`assets/DejaVuSans.ttf`, Bitstream Vera licence in
//! `assets/DejaVuSans-LICENSE.txt`), drawn into PNGs by [`raster`]'s backend, PNGs are encoded in memory with the `png` crate
//! (`../shared/design/TOKENIZERS.md` §5). Output bytes are deterministic: no timestamps, stable order, so SVGs can be checked in tests.
//! Nothing here writes files: the caller writes the returned bytes.

mod axis;
mod bars;
pub mod calibration;
pub mod policies;
mod raster;
pub mod sweep;
pub mod timeline;

pub use axis::{TickedAxis, Ticks, nice_ceiling, percent_axis};
pub use bars::{BarChart, distinct_labels, draw_bars, shorten, shorten_middle};

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Result of drawing.
pub type DrawResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// A chart could not be drawn or encoded.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart `{chart}`: {message}")]
pub struct ChartError {
    /// The chart's title.
    pub chart: String,
    /// What went wrong.
    pub message: String,
}

/// A chart: data prepared beforehand, drawn onto any plotters backend.
pub trait Chart {
    /// The caption (also names the chart in errors).
    fn title(&self) -> &str;
    /// Size in pixels.
    fn size(&self) -> (u32, u32) {
        (WIDTH, HEIGHT)
    }
    /// Why the chart is not drawn, when a [`Placeholder`] stands in its place.
    fn not_drawn(&self) -> Option<&str> {
        None
    }
    /// What the SVG's `<title>` says (a browser shows it as the chart's tooltip): what the caption
    /// had to shorten, such as a conversation's full path. `None`: no `<title>`.
    fn tooltip(&self) -> Option<&str> {
        None
    }
    /// Draws the chart onto `root`.
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
}

/// What a report shows in a chart's place when there is nothing to draw: the chart's title and
/// why, on a frame the chart's size. The page keeps its sections and the files their names, and the
/// reader is told what is missing rather than shown bare axes or, with nothing replayed, every
/// policy at 100% of none.
#[derive(Debug, Clone, PartialEq)]
pub struct Placeholder {
    /// The chart's title.
    pub title: String,
    /// Why it is not drawn, as a clause: "the inputs hold no requests".
    pub reason: String,
}

/// Frame and text colour of a [`Placeholder`].
const PLACEHOLDER_COLOR: RGBColor = RGBColor(117, 117, 117);
/// Longest line of a [`Placeholder`]'s reason, in chars (about the chart's width at [`TITLE_SIZE`]).
const PLACEHOLDER_LINE_CHARS: usize = 72;

impl Chart for Placeholder {
    fn title(&self) -> &str {
        &self.title
    }

    fn not_drawn(&self) -> Option<&str> {
        Some(&self.reason)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let area = root.margin(12, 12, 12, 12).titled(&self.title, (FONT, TITLE_SIZE))?;
        let (w, h) = area.dim_in_pixel();
        let (w, h) = (i32::try_from(w).unwrap_or(i32::MAX), i32::try_from(h).unwrap_or(i32::MAX));
        area.draw(&Rectangle::new([(0, 0), (w - 1, h - 1)], PLACEHOLDER_COLOR.stroke_width(1)))?;
        let style = TextStyle::from((FONT, TITLE_SIZE).into_font())
            .color(&PLACEHOLDER_COLOR)
            .pos(Pos::new(HPos::Center, VPos::Center));
        let lines = wrap(&format!("Not drawn: {}.", self.reason), PLACEHOLDER_LINE_CHARS);
        let step = TITLE_SIZE as i32 * 3 / 2;
        let top = h / 2 - step * (lines.len() as i32 - 1) / 2;
        for (i, line) in lines.into_iter().enumerate() {
            area.draw(&Text::new(line, (w / 2, top + step * i as i32), style.clone()))?;
        }
        Ok(())
    }
}

/// `text` in lines of at most `max` chars, broken between words (a longer word has a line of its own).
/// Not `textwrap` 0.16 (first-fit, no hyphenation, words unbroken): it keeps tabs, newlines,
/// leading and double spaces, and counts a CJK char as two columns and an escape sequence as none.
fn wrap(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for word in text.split_whitespace() {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= max => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_owned()),
        }
    }
    lines
}

/// A chart, or the [`Placeholder`] a report shows in its place.
#[derive(Debug, Clone, PartialEq)]
pub enum OrPlaceholder<C> {
    /// There is something to draw.
    Chart(C),
    /// There is not, and this says why.
    Placeholder(Placeholder),
}

impl<C: Chart> Chart for OrPlaceholder<C> {
    fn title(&self) -> &str {
        match self {
            OrPlaceholder::Chart(c) => c.title(),
            OrPlaceholder::Placeholder(p) => p.title(),
        }
    }

    fn size(&self) -> (u32, u32) {
        match self {
            OrPlaceholder::Chart(c) => c.size(),
            OrPlaceholder::Placeholder(p) => p.size(),
        }
    }

    fn not_drawn(&self) -> Option<&str> {
        match self {
            OrPlaceholder::Chart(c) => c.not_drawn(),
            OrPlaceholder::Placeholder(p) => p.not_drawn(),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        match self {
            OrPlaceholder::Chart(c) => c.draw(root),
            OrPlaceholder::Placeholder(p) => p.draw(root),
        }
    }
}

impl<C> OrPlaceholder<C> {
    /// The chart `make` prepares, or a placeholder titled `title` when there is a `reason` not to
    /// draw it.
    pub fn unless(reason: Option<String>, title: impl FnOnce() -> String, make: impl FnOnce() -> C) -> Self {
        match reason {
            Some(reason) => OrPlaceholder::Placeholder(Placeholder { title: title(), reason }),
            None => OrPlaceholder::Chart(make()),
        }
    }
}

// ---- style ----

/// Default chart width in pixels.
pub const WIDTH: u32 = 960;
/// Default chart height in pixels.
pub const HEIGHT: u32 = 480;
/// The one font family (registered from the embedded font).
pub const FONT: &str = "sans-serif";
/// Caption size.
pub const TITLE_SIZE: u32 = 20;
/// Axis description size.
pub const AXIS_SIZE: u32 = 15;
/// Tick and legend label size.
pub const LABEL_SIZE: u32 = 13;
/// Longest category label on a bar chart, in chars (longer ones lose their middle to `…`), and
/// the fewest it is shortened to when its slot is narrow; pixels kept free between two labels.
pub const MAX_LABEL_CHARS: usize = 26;
pub(crate) const MIN_LABEL_CHARS: usize = 5;
pub(crate) const LABEL_GAP: i32 = 6;
/// Colours of the context categories, in [`crate::measure::Category::ALL`] order: light tints, so
/// the policies' lines ([`SERIES_COLORS`]) drawn over the stacked bands stay the strongest marks.
pub const CATEGORY_COLORS: [RGBColor; crate::measure::Category::COUNT] = [
    RGBColor(240, 240, 240), // unrecorded
    RGBColor(228, 228, 228), // framing
    RGBColor(200, 200, 200), // system
    RGBColor(217, 217, 217), // user
    RGBColor(199, 233, 192), // assistant
    RGBColor(218, 218, 235), // thinking
    RGBColor(188, 189, 220), // hidden reasoning
    RGBColor(252, 187, 161), // server-side content
    RGBColor(217, 200, 180), // images
    RGBColor(253, 208, 162), // tool calls
    RGBColor(222, 235, 247), // tool summaries
    RGBColor(171, 203, 228), // tool contents
    RGBColor(255, 242, 174), // placeholders
];
/// Colours of series (policies, measures), in order: the Okabe–Ito palette (Okabe & Ito, "Color
/// Universal Design", 2008) without its yellow, which is too light for a line on white, and with
/// its black a shade lighter than the axes'. Series `i` always gets the same colour (a policy keeps
/// its colour in every chart of a report, since every chart lists the policies in the run's order);
/// black is only ever the first, and past the seventh series the six others repeat with a dash
/// pattern ([`series_dash`]). Under a simulated deuteranopia, protanopia or tritanopia (Machado et
/// al. 2009, full severity) every two of them stay at least [`MIN_CVD_DELTA_E`] apart (a unit test
/// checks it).
pub const SERIES_COLORS: [RGBColor; 7] = [
    RGBColor(34, 34, 34),    // near-black (the axes are black)
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
];
/// The least CIE76 colour difference (ΔE*ab) kept between two series colours, and between a series
/// and the reference lines, under each simulated colour-vision deficiency: 15 is well past the
/// ~2.3 of a just-noticeable difference, and enough to tell two 2-px lines apart at a glance.
pub const MIN_CVD_DELTA_E: f64 = 15.0;
/// Colour of reference lines (the context window, 100%, a recommendation): a dark grey, apart from
/// every series colour, and dashed ([`MARK_DASH`]), so a reference never reads as one of the series.
pub const MARK_COLOR: RGBColor = RGBColor(89, 89, 89);
/// Dash length and gap of reference lines, in pixels.
pub const MARK_DASH: (u32, u32) = (8, 5);

/// Two path elements drawn as one, in backend pixels.
pub type TwoPaths<DB> =
    plotters::element::ComposedElement<(i32, i32), DB, PathElement<(i32, i32)>, PathElement<(i32, i32)>>;

/// The legend glyph of a reference line: two dashes.
pub fn mark_legend<DB: DrawingBackend>((x, y): (i32, i32)) -> TwoPaths<DB> {
    let style = MARK_COLOR.stroke_width(2);
    EmptyElement::at((x, y))
        + PathElement::new([(0, 0), (5, 0)], style)
        + PathElement::new([(8, 0), (13, 0)], style)
}

/// The colour of series `i`. Series 0 (the baseline, `none`, where a chart has one) alone is
/// near-black; the others take the six colours after it in turn.
pub fn series_color(i: usize) -> RGBColor {
    match i {
        0 => SERIES_COLORS[0],
        _ => SERIES_COLORS[1 + (i - 1) % (SERIES_COLORS.len() - 1)],
    }
}

/// The legend glyph of series `i`'s line: its colour, solid or in its [`series_dash`] pattern.
pub fn series_legend<DB: DrawingBackend>(i: usize, (x, y): (i32, i32)) -> TwoPaths<DB> {
    let style = series_color(i).stroke_width(2);
    let (first, second) = match series_dash(i) {
        None => ([(0, 0), (7, 0)], [(6, 0), (13, 0)]),
        Some((dash, _)) if dash > 4 => ([(0, 0), (8, 0)], [(11, 0), (13, 0)]),
        Some(_) => ([(0, 0), (2, 0)], [(5, 0), (7, 0)]),
    };
    EmptyElement::at((x, y)) + PathElement::new(first, style) + PathElement::new(second, style)
}

/// What a legend entry drawn beside a plot ([`side_legend`]) shows before its label.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Swatch {
    /// A filled band of this colour (a stacked category).
    Band(RGBColor),
    /// Series `i`'s line ([`series_legend`]).
    Line(usize),
    /// Series `i`'s dot.
    Dot(usize),
    /// The baseline's dashed line, in series 0's colour.
    Baseline,
    /// A reference line ([`mark_legend`]).
    Reference,
    /// Series `i`'s prune-event marker ([`prune_marker`]).
    Prune(usize),
    /// The cold-cache marker ([`cold_marker`]).
    Cold,
    /// Nothing: the row goes on saying something about the row above.
    Text,
}

/// Colour of the cold-cache marks: the reference lines' grey, so they never read as a policy.
pub const COLD_COLOR: RGBColor = MARK_COLOR;

/// A prune event of series `i` at `at`: a small upward triangle in its colour, outlined in white
/// so it stands out on its own line.
pub fn prune_marker<C, DB: DrawingBackend>(i: usize, at: C) -> Marker<C, DB, Polygon<(i32, i32)>> {
    let triangle = [(0, -7), (-6, 4), (6, 4)];
    EmptyElement::at(at)
        + Polygon::new(triangle, WHITE.filled())
        + Polygon::new(triangle.map(|(a, b)| (a * 2 / 3, b * 2 / 3)), series_color(i).filled())
}

/// A cold-cache request at `at` (on the x axis): a short grey bar standing on it, edged in white.
pub fn cold_marker<C, DB: DrawingBackend>(at: C) -> Marker<C, DB, Rectangle<(i32, i32)>> {
    EmptyElement::at(at)
        + Rectangle::new([(-2, -10), (2, 0)], WHITE.filled())
        + Rectangle::new([(-1, -9), (1, 0)], COLD_COLOR.filled())
}

/// Two shapes drawn as one at a point, in pixels around it.
pub type Marker<C, DB, S> = plotters::element::ComposedElement<C, DB, S, S>;

/// Height of one legend row, in pixels.
const LEGEND_ROW: i32 = 18;

/// A legend in its own area beside the plot, one row per entry from `top` down, each label cut to
/// what the area's width holds. Drawn outside the plot, it never covers a line.
pub fn side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    top: i32,
    entries: &[(String, Swatch)],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let width = area.dim_in_pixel().0 as i32;
    let max_chars = usize::try_from((width - 28) / 7).unwrap_or(0).max(MIN_LABEL_CHARS);
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (k, (label, swatch)) in entries.iter().enumerate() {
        let y = top + k as i32 * LEGEND_ROW;
        match *swatch {
            Swatch::Band(color) => area.draw(&Rectangle::new([(4, y - 5), (16, y + 5)], color.filled()))?,
            Swatch::Line(i) => area.draw(&series_legend(i, (4, y)))?,
            Swatch::Dot(i) => area.draw(&Circle::new((10, y), 5, series_color(i).filled()))?,
            Swatch::Baseline => {
                let style = series_color(0).stroke_width(2);
                area.draw(&PathElement::new([(4, y), (9, y)], style))?;
                area.draw(&PathElement::new([(12, y), (17, y)], style))?;
            }
            Swatch::Reference => area.draw(&mark_legend((4, y)))?,
            Swatch::Prune(i) => area.draw(&prune_marker(i, (10, y + 1)))?,
            Swatch::Cold => area.draw(&cold_marker((10, y + 5)))?,
            Swatch::Text => {}
        }
        area.draw_text(&shorten(label, max_chars), &style, (24, y))?;
    }
    Ok(())
}

/// The dash pattern (dash, gap in pixels) of series `i`'s line: none for the first round of
/// [`SERIES_COLORS`], then long dashes, then dots, so two series that share a colour differ in
/// pattern.
pub fn series_dash(i: usize) -> Option<(u32, u32)> {
    match (i.saturating_sub(1) / (SERIES_COLORS.len() - 1)) % 3 {
        0 => None,
        1 => Some((12, 4)),
        _ => Some((2, 3)),
    }
}

/// `n` with a comma between each group of three digits: `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(d);
    }
    out
}

// ---- output paths (relative to the report directory) ----

/// Directory of the chart files.
pub const DIR: &str = "charts";
/// File stem of the sweep chart.
pub const SWEEP: &str = "charts/sweep";
/// File stem of the policy comparison chart.
pub const POLICIES: &str = "charts/policies";
/// File stem of the calibration chart.
pub const CALIBRATION: &str = "charts/calibration";

/// File stem of the timeline of conversation `index` (0-based, in input order).
pub fn timeline_stem(index: usize) -> String {
    format!("{DIR}/timeline-{:03}", index + 1)
}

/// Whether `name`, a file name in [`DIR`], is a timeline chart as a report names them
/// ([`timeline_stem`], SVG or PNG). A report removes those it does not write again, so that a
/// directory written with `--timelines all` and then with fewer holds only the charts its page
/// shows.
pub fn is_timeline_file(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("timeline-") else { return false };
    let Some(number) = rest.strip_suffix(".svg").or_else(|| rest.strip_suffix(".png")) else { return false };
    number.len() >= 3 && number.bytes().all(|b| b.is_ascii_digit())
}

/// `stem.ext`.
pub fn path(stem: &str, ext: &str) -> String {
    format!("{stem}.{ext}")
}

// ---- rendering ----

pub(crate) static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

pub(crate) fn fonts() -> Result<(), String> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        plotters::style::register_font(FONT, FontStyle::Normal, FONT_BYTES)
            .map_err(|_| "the embedded DejaVu Sans could not be loaded".to_owned())
    })
    .clone()
}

fn error(chart: &impl Chart, message: impl ToString) -> ChartError {
    ChartError { chart: chart.title().to_owned(), message: message.to_string() }
}

/// The chart as an SVG document.
pub fn svg(chart: &impl Chart) -> Result<String, ChartError> {
    fonts().map_err(|e| error(chart, e))?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, chart.size()).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(chart, e))?;
        chart.draw(&root).map_err(|e| error(chart, e))?;
        root.present().map_err(|e| error(chart, e))?;
    }
    if let Some(tooltip) = chart.tooltip() {
        with_title(&mut out, tooltip);
    }
    Ok(out)
}

/// Puts `<title>text</title>` first inside `svg`'s root element, `text` escaped for XML (`&`, `<`,
/// `>`, `"`) and its control characters, which XML does not allow, replaced by `\u{FFFD}`.
fn with_title(svg: &mut String, text: &str) {
    let Some(at) = svg.find("<svg").and_then(|start| svg[start..].find('>').map(|end| start + end + 1))
    else {
        return;
    };
    let mut title = String::from("\n<title>");
    for c in text.chars() {
        match c {
            '&' => title.push_str("&amp;"),
            '<' => title.push_str("&lt;"),
            '>' => title.push_str("&gt;"),
            '"' => title.push_str("&quot;"),
            c if c.is_control() => title.push('\u{FFFD}'),
            c => title.push(c),
        }
    }
    title.push_str("</title>");
    svg.insert_str(at, &title);
}

/// `n` tokens in at most four characters and a unit: `950`, `9.9k`, `79k`, `1.2M`.
pub fn compact(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..9_950 => format!("{:.1}k", n as f64 / 1e3),
        9_950..999_500 => format!("{:.0}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// The chart as PNG bytes.
pub fn png(chart: &impl Chart) -> Result<Vec<u8>, ChartError> {
    fonts().map_err(|e| error(chart, e))?;
    let (w, h) = chart.size();
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = raster::PngBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| error(chart, e))?;
        chart.draw(&root).map_err(|e| error(chart, e))?;
        root.present().map_err(|e| error(chart, e))?;
    }
    let mut out = Vec::new();
    // Deflate level 4 with the default adaptive filter. Deflating was over a quarter of a `report`
    // of the shared corpus at the encoder's default (`Balanced`, level 6); level 4 took that report
    // 276.4 → 245.9 ms on two threads and 482.3 → 425.2 ms on one, for charts 2.8% larger
    // (1,459,505 → 1,500,384 bytes of PNG; traces/: 91.3 → 80.8 ms, 280,909 → 287,051 bytes;
    // 2026-12-01, 8–12 interleaved rounds). Level 3 was no faster (248.1 ms) and larger; in one
    // run each, fdeflate (`Compression::Fast`) took 225 ms for charts 2.5 times as large, level 9
    // 455 ms for 0.4% smaller ones.
    let mut encoder = ::png::Encoder::new(&mut out, w, h);
    encoder.set_color(::png::ColorType::Rgb);
    encoder.set_depth(::png::BitDepth::Eight);
    encoder.set_deflate_compression(::png::DeflateCompression::Level(4));
    let mut writer = encoder.write_header().map_err(|e| error(chart, e))?;
    writer.write_image_data(&pixels).map_err(|e| error(chart, e))?;
    writer.finish().map_err(|e| error(chart, e))?;
    Ok(out)
}

/// Draws the legend of every labelled series in the house style.
pub fn legend<'a, DB, CT>(chart: &mut ChartContext<'a, DB, CT>, position: SeriesLabelPosition) -> DrawResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    CT: plotters::coord::CoordTranslate,
{
    chart
        .configure_series_labels()
        .position(position)
        .label_font((FONT, LABEL_SIZE))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    Ok(())
}

/// Whether `svg` has a text element that reads exactly `text` (plotters writes each on its own line).
#[cfg(test)]
pub fn has_text(svg: &str, text: &str) -> bool {
    svg.contains(&format!(">\n{text}\n</text>"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_says_what_is_not_drawn_and_why() {
        let p = Placeholder {
            title: "Threshold sweep under none".into(),
            reason: "the inputs hold no tool results to sweep".into(),
        };
        assert_eq!(p.not_drawn(), Some("the inputs hold no tool results to sweep"));
        let svg = svg(&p).unwrap();
        assert!(has_text(&svg, "Threshold sweep under none"));
        assert!(has_text(&svg, "Not drawn: the inputs hold no tool results to sweep."), "{svg}");
        assert_eq!(&png(&p).unwrap()[1..4], b"PNG");
        assert_eq!(wrap("aa bb cc dddddd e", 5), ["aa bb", "cc", "dddddd", "e"]);
    }

    #[test]
    fn nice_ceilings_round_up_to_round_numbers() {
        assert_eq!(nice_ceiling(0.0), 1.0);
        assert_eq!(nice_ceiling(87.0), 100.0);
        assert_eq!(nice_ceiling(101.0), 120.0);
        assert_eq!(nice_ceiling(240.0), 250.0);
        assert_eq!(nice_ceiling(7.0), 8.0);
        assert_eq!(nice_ceiling(98_565.0), 100_000.0);
    }

    #[test]
    fn tick_labels_share_one_format_per_axis_and_never_repeat() {
        let labels = |lo, hi, max, min_step| {
            let t = Ticks::new(lo, hi, max, min_step);
            t.values.iter().map(|v| t.label(v)).collect::<Vec<String>>()
        };
        // Thousands as `k` on the whole axis, not from 10,000 on.
        assert_eq!(labels(0.0, 12_000.0, 10, 0.0), ["0", "2k", "4k", "6k", "8k", "10k", "12k"]);
        assert_eq!(labels(0.0, 300_000.0, 10, 0.0), ["0", "50k", "100k", "150k", "200k", "250k", "300k"]);
        assert_eq!(labels(0.0, 5000.0, 10, 0.0), ["0", "1000", "2000", "3000", "4000", "5000"]);
        assert_eq!(labels(0.0, 15_000.0, 4, 0.0), ["0", "5k", "10k", "15k"]);
        assert_eq!(labels(0.0, 10_000.0, 30, 0.0)[..3], ["0", "0.5k", "1.0k"]);
        // A tiny axis: decimals from the step, or, for counts, whole steps.
        assert_eq!(labels(0.0, 1.0, 6, 0.0), ["0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        assert_eq!(labels(0.0, 2.5, 10, 1.0), ["0", "1", "2"]);
        assert_eq!(labels(0.0, 1.0, 12, 1.0), ["0", "1"]);
        assert_eq!(labels(0.0, 30.0, 12, 1.0), ["0", "5", "10", "15", "20", "25", "30"]);
        assert_eq!(labels(-20.0, 100.0, 7, 0.0), ["-20", "0", "20", "40", "60", "80", "100"]);
        for (lo, hi, max, min_step) in [(0.0, 1.2, 10, 0.0), (0.0, 8.0, 10, 1.0), (0.0, 120.0, 10, 0.0)] {
            let shown = labels(lo, hi, max, min_step);
            let distinct: std::collections::BTreeSet<&String> = shown.iter().collect();
            assert_eq!(distinct.len(), shown.len(), "{shown:?}");
            assert!(shown.len() <= max, "{shown:?}");
        }
        // The light grid falls between the ticks, on steps the axis allows.
        assert_eq!(Ticks::new(0.0, 4.0, 3, 1.0).light, [0.0, 1.0, 2.0, 3.0, 4.0]);
        assert!(Ticks::new(0.0, 2.0, 12, 1.0).light.is_empty());
    }

    #[test]
    fn a_bar_chart_axis_in_thousands_labels_every_tick_in_thousands() {
        let chart = BarChart {
            title: "t".into(),
            y_desc: "y".into(),
            x_desc: "x".into(),
            categories: vec!["a".into(), "b".into()],
            series: vec![("s".into(), vec![11_000.0, 3000.0])],
            reference: None,
        };
        let svg = svg(&chart).unwrap();
        for tick in ["0", "2k", "8k", "10k", "12k"] {
            assert!(has_text(&svg, tick), "no tick {tick}");
        }
        assert!(!has_text(&svg, "8000"), "8000 beside 10k");
    }

    #[test]
    fn thousands_are_separated_by_commas() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(57_428_710), "57,428,710");
        assert_eq!(thousands(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn long_labels_are_shortened_with_an_ellipsis() {
        assert_eq!(shorten("none", 5), "none");
        assert_eq!(shorten("budget:max=100000", 8), "budget:…");
        assert_eq!(shorten_middle("none", 5), "none");
        assert_eq!(shorten_middle("openhands-amortized:max_size=20", 12), "openha…ze=20");
        assert_eq!(shorten_middle("openhands-amortized:max_size=40", 12), "openha…ze=40");
        assert_eq!(shorten_middle("日本語のテキスト", 5), "日本…スト");
    }

    #[test]
    fn output_paths_live_under_the_charts_directory() {
        assert_eq!(path(&timeline_stem(0), "svg"), "charts/timeline-001.svg");
        for i in [0, 8, 998, 999, 12_345] {
            for ext in ["svg", "png"] {
                let name = path(&timeline_stem(i), ext);
                assert!(is_timeline_file(name.strip_prefix("charts/").unwrap()), "{name}");
            }
        }
        for other in [
            "timeline-01.svg",
            "timeline-001.pdf",
            "timeline-001.svg.bak",
            "timeline-abc.png",
            "sweep.svg",
            "my-timeline-001.svg",
            "timeline-.svg",
        ] {
            assert!(!is_timeline_file(other), "{other}");
        }
        for stem in [SWEEP, POLICIES, CALIBRATION] {
            assert!(stem.starts_with("charts/"));
        }
    }

    /// Machado, Oliveira & Fernandes (2009) simulation matrices at full severity, on linear RGB.
    const DEUTERANOPIA: [[f64; 3]; 3] =
        [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]];
    const PROTANOPIA: [[f64; 3]; 3] =
        [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]];
    const TRITANOPIA: [[f64; 3]; 3] =
        [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]];
    const NORMAL: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    /// CIE L*a*b* (D65) of `c` as seen through the simulation matrix `m`.
    fn seen(c: RGBColor, m: &[[f64; 3]; 3]) -> [f64; 3] {
        let linear = |v: u8| {
            let v = f64::from(v) / 255.0;
            if v <= 0.04045 { v / 12.92 } else { ((v + 0.055) / 1.055).powf(2.4) }
        };
        let rgb = [linear(c.0), linear(c.1), linear(c.2)];
        let [r, g, b] = m.map(|row| (row[0] * rgb[0] + row[1] * rgb[1] + row[2] * rgb[2]).clamp(0.0, 1.0));
        let xyz = [
            (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
            0.2126 * r + 0.7152 * g + 0.0722 * b,
            (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
        ];
        let f = |t: f64| if t > 216.0 / 24389.0 { t.cbrt() } else { (24389.0 / 27.0 * t + 16.0) / 116.0 };
        let [fx, fy, fz] = xyz.map(f);
        [116.0 * fy - 16.0, 500.0 * (fx - fy), 200.0 * (fy - fz)]
    }

    fn delta_e(a: [f64; 3], b: [f64; 3]) -> f64 {
        ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt()
    }

    /// The closest two of `colors` under `m`, and their difference.
    fn closest(colors: &[RGBColor], m: &[[f64; 3]; 3]) -> (f64, RGBColor, RGBColor) {
        let mut best = (f64::INFINITY, colors[0], colors[0]);
        for (i, a) in colors.iter().enumerate() {
            for b in &colors[i + 1..] {
                let d = delta_e(seen(*a, m), seen(*b, m));
                if d < best.0 {
                    best = (d, *a, *b);
                }
            }
        }
        best
    }

    #[test]
    fn every_two_series_and_the_reference_line_stay_apart_under_each_colour_vision_deficiency() {
        let mut colors = SERIES_COLORS.to_vec();
        colors.push(MARK_COLOR);
        for (name, m) in [
            ("normal", NORMAL),
            ("deuteranopia", DEUTERANOPIA),
            ("protanopia", PROTANOPIA),
            ("tritanopia", TRITANOPIA),
        ] {
            let (d, a, b) = closest(&colors, &m);
            assert!(d >= MIN_CVD_DELTA_E, "{name}: {a:?} and {b:?} are only ΔE {d:.1} apart");
        }
    }

    #[test]
    fn the_old_red_and_green_series_would_fail_the_colour_vision_check() {
        // The check can fail: the two series the report used to tell apart by red and green.
        let (d, ..) = closest(&[RGBColor(216, 67, 21), RGBColor(46, 125, 50)], &PROTANOPIA);
        assert!(d < MIN_CVD_DELTA_E, "ΔE {d:.1}");
    }

    #[test]
    fn series_that_share_a_colour_differ_in_dash_pattern() {
        let n = 1 + 3 * (SERIES_COLORS.len() - 1);
        for i in 0..n {
            for j in i + 1..n {
                if series_color(i) == series_color(j) {
                    assert_ne!(series_dash(i), series_dash(j), "series {i} and {j}");
                }
            }
        }
    }
}
