//! Charts drawn with plotters, as SVG and PNG, one file per chart.
//!
//! Each chart is a plain data struct made by a `prepare` function (unit-tested without drawing) and
//! a [`Chart::draw`] that returns `Result` and never unwraps (the pattern of criterion's `plot/`).
//! This module holds what they share: style constants, every output path, the font and the two
//! renderers. Nothing needs a system package at build or run time: text is laid out with ab_glyph
//! from an embedded DejaVu Sans (`assets/DejaVuSans.ttf`, Bitstream Vera licence in
//! `assets/DejaVuSans-LICENSE.txt`), PNGs are encoded in memory with the `png` crate (TOKENIZERS.md
//! §5). Output bytes are deterministic: no timestamps, stable order, so SVGs can be checked in tests.
//! Nothing here writes files: the caller writes the returned bytes.

pub mod calibration;
pub mod policies;
pub mod sweep;
pub mod timeline;

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
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
const MIN_LABEL_CHARS: usize = 5;
const LABEL_GAP: i32 = 6;
/// Colours of the context categories, in [`crate::measure::Category::ALL`] order: light tints, so
/// the policies' lines ([`SERIES_COLORS`]) drawn over the stacked bands stay the strongest marks.
pub const CATEGORY_COLORS: [RGBColor; crate::measure::Category::COUNT] = [
    RGBColor(240, 240, 240), // unrecorded
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
    /// Nothing: the row goes on saying something about the row above.
    Text,
}

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

static FONT_BYTES: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

fn fonts() -> Result<(), String> {
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
    Ok(out)
}

/// The chart as PNG bytes.
pub fn png(chart: &impl Chart) -> Result<Vec<u8>, ChartError> {
    fonts().map_err(|e| error(chart, e))?;
    let (w, h) = chart.size();
    let mut pixels = vec![0u8; w as usize * h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (w, h)).into_drawing_area();
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

/// `text` cut to `max` chars with a trailing `…`.
pub fn shorten(text: &str, max: usize) -> String {
    cut(text, max, max.saturating_sub(1))
}

/// A nice upper bound for an axis: `value` rounded up to 1, 2 or 5 × a power of ten.
pub fn nice_ceiling(value: f64) -> f64 {
    if !value.is_finite() || value <= 0.0 {
        return 1.0;
    }
    let magnitude = 10f64.powf(value.log10().floor());
    [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|v| *v >= value)
        .unwrap_or(10.0 * magnitude)
}

/// The ticks of a value axis and the one format all their labels share. Both are chosen once per
/// axis, from the step between ticks: as many decimals as the step needs, and thousands as `k` on
/// the whole axis once its largest tick reaches 10,000 (0 is `0` either way). Formatting each
/// value on its own, `{:.0}` with `k` from 10,000, gave one axis `8000, 10k, 12k` and a small one
/// `0 0 1 2 2 2`; here distinct ticks always get distinct labels.
#[derive(Debug, Clone, PartialEq)]
pub struct Ticks {
    /// The labelled values, ascending, 1, 2 or 5 × a power of ten apart.
    pub values: Vec<f64>,
    /// Unlabelled values between them, for the light grid.
    pub light: Vec<f64>,
    /// Whether every label is in thousands, with a `k`.
    thousands: bool,
    /// Decimals of every label.
    decimals: usize,
}

impl Ticks {
    /// At most `max` ticks (`max` ≥ 2: a range has two ends) over `lo..=hi`, at least `min_step`
    /// apart: 1 for counts such as tokens or requests, whose fractions mean nothing.
    pub fn new(lo: f64, hi: f64, max: usize, min_step: f64) -> Ticks {
        let step = tick_step((hi - lo) / max.saturating_sub(1).max(1) as f64, min_step);
        let values = multiples(lo, hi, step);
        // A fifth or a half of the step, where that is still a step the axis allows.
        let light = [5.0, 2.0]
            .iter()
            .map(|d| step / d)
            .find(|sub| *sub >= min_step.max(f64::MIN_POSITIVE) && is_nice(*sub))
            .map_or_else(Vec::new, |sub| multiples(lo, hi, sub));
        let thousands = values.iter().any(|v| v.abs() >= 10_000.0);
        let unit_step = if thousands { step / 1000.0 } else { step };
        let decimals = (-unit_step.log10().floor()).max(0.0) as usize;
        Ticks { values, light, thousands, decimals }
    }

    /// The linear axis `lo..hi` with these ticks on it.
    pub fn axis(self, lo: f64, hi: f64) -> TickedAxis {
        let labelled = self.values.iter().map(|v| (*v, self.label(v))).collect();
        TickedAxis::new(lo..hi, labelled, self.light)
    }

    /// The label of tick `v`.
    pub fn label(&self, v: &f64) -> String {
        let decimals = self.decimals;
        if v.abs() < 1e-12 {
            "0".to_owned()
        } else if self.thousands {
            format!("{:.decimals$}k", v / 1000.0)
        } else {
            format!("{v:.decimals$}")
        }
    }
}

/// A linear axis that draws the ticks it is given, each with its own label ([`Ticks::axis`]).
pub struct TickedAxis {
    linear: RangedCoordf64,
    ticks: Vec<(f64, String)>,
    light: Vec<f64>,
}

impl TickedAxis {
    /// The axis `range` with labelled `ticks` and unlabelled `light` grid lines.
    pub fn new(range: std::ops::Range<f64>, ticks: Vec<(f64, String)>, light: Vec<f64>) -> TickedAxis {
        TickedAxis { linear: range.into(), ticks, light }
    }
}

impl Ranged for TickedAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.ticks.iter().map(|(v, _)| *v).collect()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.linear.range()
    }
}

impl ValueFormatter<f64> for TickedAxis {
    fn format_ext(&self, value: &f64) -> String {
        self.ticks.iter().find(|(v, _)| v == value).map_or_else(String::new, |(_, label)| label.clone())
    }
}

/// The smallest of 1, 2 and 5 × a power of ten that is at least `raw` and `min_step`.
fn tick_step(raw: f64, min_step: f64) -> f64 {
    let wanted = if raw.is_finite() && raw > 0.0 { raw.max(min_step) } else { min_step.max(1.0) };
    let magnitude = 10f64.powf(wanted.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= wanted * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// Whether `step` is 1, 2 or 5 × a power of ten.
fn is_nice(step: f64) -> bool {
    let mantissa = step / 10f64.powf(step.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().any(|m| (mantissa - m).abs() < 1e-6)
}

/// The multiples of `step` in `lo..=hi`, each computed from its index so no error accumulates.
fn multiples(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
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

/// Grouped vertical bars: one group per category, one bar per series, an optional horizontal
/// reference line. Category labels are drawn under the groups (shortened), series in a legend.
#[derive(Debug, Clone, PartialEq)]
pub struct BarChart {
    /// Caption.
    pub title: String,
    /// Y axis description.
    pub y_desc: String,
    /// X axis description.
    pub x_desc: String,
    /// One label per group.
    pub categories: Vec<String>,
    /// `(name, one value per category)`.
    pub series: Vec<(String, Vec<f64>)>,
    /// A horizontal line at this value, with its label.
    pub reference: Option<(f64, String)>,
}

impl Chart for BarChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        draw_bars(root, self)
    }
}

/// Draws grouped bars.
pub fn draw_bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, b: &BarChart) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let n = b.categories.len().max(1);
    let top = b
        .series
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .chain(b.reference.as_ref().map(|r| r.0))
        .fold(0.0, f64::max);
    let y_max = nice_ceiling(top * 1.08);
    let mut chart = ChartBuilder::on(root)
        .caption(&b.title, (FONT, TITLE_SIZE))
        .margin(12)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..n as f64, Ticks::new(0.0, y_max, 10, 0.0).axis(0.0, y_max))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_desc(&b.x_desc)
        .y_desc(&b.y_desc)
        .axis_desc_style((FONT, AXIS_SIZE))
        .label_style((FONT, LABEL_SIZE))
        .draw()?;
    let groups = b.series.len().max(1) as f64;
    let width = 0.8 / groups;
    for (s, (name, values)) in b.series.iter().enumerate() {
        let color = series_color(s + 1);
        chart
            .draw_series(values.iter().enumerate().map(|(i, v)| {
                let x0 = i as f64 + 0.1 + s as f64 * width;
                Rectangle::new([(x0, 0.0), (x0 + width * 0.92, *v)], color.filled())
            }))?
            .label(name.as_str())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    if let Some((value, label)) = &b.reference {
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, *value), (n as f64, *value)],
                MARK_DASH.0,
                MARK_DASH.1,
                MARK_COLOR.stroke_width(2),
            ))?
            .label(label.as_str())
            .legend(mark_legend);
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
    // Each label gets its category's slot, less a gap: longer ones lose chars from the middle
    // (policy kinds differ at the start, their parameters at the end), so neighbours never run
    // into one another and two long names sharing a prefix still read apart; two that would still
    // read the same are told apart by [`distinct_labels`].
    let slot = chart.backend_coord(&(1.0, 0.0)).0 - chart.backend_coord(&(0.0, 0.0)).0;
    let room = u32::try_from(slot - LABEL_GAP).unwrap_or(0);
    let mut fits = Vec::with_capacity(b.categories.len());
    for label in &b.categories {
        let width = |max| root.estimate_text_size(&shorten_middle(label, max), &style).map(|(w, _)| w);
        let mut max = MAX_LABEL_CHARS;
        while max > MIN_LABEL_CHARS && width(max)? > room {
            max -= 1;
        }
        fits.push(max);
    }
    for (i, text) in distinct_labels(&b.categories, &fits).into_iter().enumerate() {
        let (x, y) = chart.backend_coord(&(i as f64 + 0.5, 0.0));
        root.draw(&Text::new(text, (x, y + 6), style.clone()))?;
    }
    Ok(())
}

/// The labels of a bar chart's groups, label `i` in `fits[i]` chars where it can be, no two the
/// same unless the labels are. Each loses its middle ([`shorten_middle`]); when two would then
/// read the same (`search_onestop_flight` and `search_direct_flight` both `search…flight`), the
/// cut moves first, keeping more of the head or of the tail at the same width, so the slot is not
/// overrun ([`distinct_cut`]). Only when no cut at that width tells them apart are they lengthened,
/// a char at a time: labels that run into a neighbour still read apart, two that are the same
/// never do.
pub fn distinct_labels(labels: &[String], fits: &[usize]) -> Vec<String> {
    let mut widths = fits.to_vec();
    let mut shown: Vec<String> = labels.iter().zip(&widths).map(|(l, &w)| shorten_middle(l, w)).collect();
    // Each round settles one clash for good or widens it by a char, so the chars bound the rounds.
    let rounds = labels.iter().map(|l| l.chars().count() + 1).sum::<usize>();
    for _ in 0..rounds {
        let Some(clash) = first_clash(labels, &shown) else { break };
        let width = clash.iter().map(|&i| widths[i]).max().unwrap_or(0);
        match distinct_cut(labels, &shown, &clash, width) {
            Some(texts) => clash.iter().zip(texts).for_each(|(&i, text)| shown[i] = text),
            None => {
                for &i in &clash {
                    widths[i] = width + 1;
                    shown[i] = shorten_middle(&labels[i], width + 1);
                }
            }
        }
    }
    shown
}

/// The places of the first text shown for two different labels, every place showing it.
fn first_clash(labels: &[String], shown: &[String]) -> Option<Vec<usize>> {
    (0..shown.len()).find_map(|i| {
        let same: Vec<usize> = (0..shown.len()).filter(|&j| shown[j] == shown[i]).collect();
        same.iter().any(|&j| labels[j] != labels[i]).then_some(same)
    })
}

/// The clashing labels in `width` chars with one cut for all (so they still line up): the cut
/// nearest the middle that sets them apart from each other and from every other label shown, on
/// a tie the one keeping more of the head (a name's start says most about it). `None` when no cut
/// at this width does.
fn distinct_cut(labels: &[String], shown: &[String], clash: &[usize], width: usize) -> Option<Vec<String>> {
    let kept = width.checked_sub(1)?;
    let middle = kept - kept / 2;
    // At least a char either side of the `…`.
    let mut heads: Vec<usize> = (1..kept).collect();
    heads.sort_by_key(|&h| (h.abs_diff(middle), std::cmp::Reverse(h)));
    heads
        .into_iter()
        .map(|h| clash.iter().map(|&i| cut(&labels[i], width, h)).collect())
        .find(|texts: &Vec<String>| told_apart(labels, shown, clash, texts))
}

/// Whether `texts`, shown in place of the labels at `clash`, read the same only where the labels
/// are the same, among themselves and against every other label `shown`.
fn told_apart(labels: &[String], shown: &[String], clash: &[usize], texts: &[String]) -> bool {
    let placed: Vec<(usize, &String)> = clash.iter().copied().zip(texts).collect();
    let others = (0..shown.len()).filter(|k| !clash.contains(k)).map(|k| (k, &shown[k]));
    let all: Vec<(usize, &String)> = placed.iter().copied().chain(others).collect();
    placed.iter().all(|&(i, text)| all.iter().all(|&(k, other)| text != other || labels[i] == labels[k]))
}

/// `text` in at most `max` chars: when it is longer, its first `head` chars, `…`, and its end.
fn cut(text: &str, max: usize, head: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max {
        return text.to_owned();
    }
    let head = head.min(max.saturating_sub(1));
    let tail = max.saturating_sub(1) - head;
    let mut s: String = chars[..head].iter().collect();
    s.push('…');
    s.extend(&chars[chars.len() - tail..]);
    s
}

/// `text` in at most `max` chars, its middle replaced by `…` when it is longer.
pub fn shorten_middle(text: &str, max: usize) -> String {
    let kept = max.saturating_sub(1);
    cut(text, max, kept - kept / 2)
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
    fn crowded_bar_labels_are_shortened_to_their_slot_and_still_read_apart() {
        let categories: Vec<String> = [
            "none",
            "openhands-amortized:max_size=20",
            "openhands-amortized:max_size=40",
            "keep-turns:n=1",
            "keep-turns:n=2",
            "keep-results:n=5",
            "opencode",
            "anthropic:trigger=20000",
            "gemini",
        ]
        .map(String::from)
        .to_vec();
        let shown = shown_labels(&labelled("policy", categories, 2));
        // The two amortized policies differ only at the end, which is kept.
        assert!(shown[1].ends_with("=20") && shown[2].ends_with("=40"), "{shown:?}");
        // Nine groups on the default width leave no room for 31 chars.
        assert!(shown[1].chars().count() < 20, "{shown:?}");
    }

    /// A bar chart of `series` series of ones over `categories`, to look at its labels.
    fn labelled(x_desc: &str, categories: Vec<String>, series: usize) -> BarChart {
        let values = vec![1.0; categories.len()];
        BarChart {
            title: "t".into(),
            y_desc: "y".into(),
            x_desc: x_desc.into(),
            categories,
            series: (0..series).map(|s| (format!("s{s}"), values.clone())).collect(),
            reference: None,
        }
    }

    /// The category labels of a bar chart as drawn, checked to be one per category and distinct.
    fn shown_labels(chart: &BarChart) -> Vec<String> {
        let svg = svg(chart).unwrap();
        let shown: Vec<String> = svg
            .split("<text")
            .filter_map(|t| t.split('>').nth(1)?.split('<').next().map(str::trim))
            .filter(|t| chart.categories.iter().any(|c| c == t) || t.contains('…'))
            .map(String::from)
            .collect();
        assert_eq!(shown.len(), chart.categories.len(), "{shown:?}");
        let distinct: std::collections::BTreeSet<&String> = shown.iter().collect();
        assert_eq!(distinct.len(), shown.len(), "{shown:?}");
        shown
    }

    #[test]
    fn bar_labels_that_would_shorten_alike_are_told_apart_in_their_slot() {
        // The ten tools of the shared corpus's calibration chart: the two flight searches both
        // became `search…flight`.
        let categories: Vec<String> = [
            "Read",
            "shell",
            "exec_command",
            "get_reservation_details",
            "Bash",
            "bash",
            "Edit",
            "search_onestop_flight",
            "get_user_details",
            "search_direct_flight",
        ]
        .map(String::from)
        .to_vec();
        let shown = shown_labels(&labelled("tool", categories, 5));
        let (onestop, direct) = (&shown[7], &shown[9]);
        assert!(onestop.starts_with("search_o") && direct.starts_with("search_d"), "{shown:?}");
        // Told apart by moving the cut, not by widening past the slot.
        assert_eq!(onestop.chars().count(), shorten_middle("search_onestop_flight", 13).chars().count());
    }

    #[test]
    fn labels_that_would_read_the_same_move_their_cut_and_only_then_widen() {
        let labels = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<Vec<String>>();
        let two = labels(&["search_onestop_flight", "search_direct_flight"]);
        assert_eq!(shorten_middle(&two[0], 13), shorten_middle(&two[1], 13));
        assert_eq!(distinct_labels(&two, &[13, 13]), ["search_o…ight", "search_d…ight"]);
        // Labels that shorten apart are shortened as before.
        let apart = labels(&["openhands-amortized:max_size=20", "openhands-amortized:max_size=40"]);
        assert_eq!(distinct_labels(&apart, &[12, 12]), ["openha…ze=20", "openha…ze=40"]);
        // No cut in five chars reaches the middle char, the only one that differs: they widen.
        let narrow = labels(&["abcXcba", "abcYcba"]);
        assert_eq!(distinct_labels(&narrow, &[5, 5]), ["abcX…a", "abcY…a"]);
        // A cut that would clash with a third label is passed over; the same label twice is no clash.
        let three = labels(&["aXcde", "aYcde", "aYcde", "aX…e"]);
        let shown = distinct_labels(&three, &[4, 4, 4, 4]);
        assert_eq!(shown[1], shown[2]);
        assert_ne!(shown[0], shown[1]);
        assert!(!shown[..3].contains(&shown[3]), "{shown:?}");
    }

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
