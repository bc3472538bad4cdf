//! The estimate-versus-real chart: the error of the seed's estimator (the calibration's first,
//! len/4) per tool, in percent of the real tokens, one horizontal bar per tool sorted from the
//! most under-counted to the most over-counted, with the error over all tool outputs as a dashed
//! reference. An error is a ratio, so a small tool's +100% shows as plainly as a large one's
//! -40%, which bars of absolute tokens hid under the largest tool. Tool names are drawn whole
//! in a label column as wide as the longest (up to [`MAX_LABEL_SHARE`] of the chart, past which a
//! name from a hostile log loses its middle).

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    AXIS_SIZE, Chart, DrawResult, FONT, LABEL_SIZE, MARK_COLOR, MARK_DASH, OrPlaceholder, TITLE_SIZE, WIDTH,
    percent_axis, series_color, shorten_middle,
};
use crate::analysis::calibration::Calibration;

/// How many tools the chart shows: those with the most real tokens.
pub const TOOLS: usize = 20;
/// The widest the label column may be, in percent of the chart's width.
pub const MAX_LABEL_SHARE: u32 = 40;
/// Height of one bar's row, and of the chart around the rows, in pixels.
const ROW: u32 = 24;
const FRAME: u32 = 150;
/// Colours of under- and over-counting bars (series colours: apart under colour-vision deficiency).
const UNDER: usize = 4;
const OVER: usize = 5;

/// One tool's bar.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    /// The tool's name, as in the calibration.
    pub tool: String,
    /// `estimate / real − 1`, in percent.
    pub error: f64,
    /// Its real tokens.
    pub tokens: u64,
}

/// Data of the calibration chart.
#[derive(Debug, Clone, PartialEq)]
pub struct CalibrationChart {
    /// Caption.
    pub title: String,
    /// X axis description.
    pub x_desc: String,
    /// The tools, the most under-counted first.
    pub tools: Vec<ToolError>,
    /// The error over all tool outputs, in percent.
    pub overall: Option<f64>,
}

/// The caption of the chart, and of its placeholder.
const TITLE: &str = "Estimate versus real tokens per tool";

/// The chart of a calibration, or a placeholder when there is no tool result to calibrate or no
/// real count to calibrate against: under `--tokenizer estimate` the "real" tokens are len/4
/// itself, so the chart would set len/4 against len/4.
pub fn prepare_or_placeholder(c: &Calibration) -> OrPlaceholder<CalibrationChart> {
    let tools = c.rows.iter().any(|r| r.group == "tool" && r.tokens > 0);
    let reason = if !tools {
        Some("the inputs hold no tool results to calibrate".to_owned())
    } else if c.is_against_estimate() {
        Some(
            "with --tokenizer estimate there are no real tokens to set the estimates against \
             (--tokenizer o200k or cl100k counts them)"
                .to_owned(),
        )
    } else {
        None
    };
    OrPlaceholder::unless(reason, || TITLE.to_owned(), || prepare(c))
}

/// Prepares the chart from a calibration: the first estimator's [`TOOLS`] tools with the most real
/// tokens (the calibration lists them most tokens first), sorted by error, the name breaking ties.
pub fn prepare(c: &Calibration) -> CalibrationChart {
    let estimator = c.rows.first().map_or("", |r| r.estimator.as_str());
    let mine = || c.rows.iter().filter(|r| r.estimator == estimator);
    let measured: Vec<_> = mine().filter(|r| r.group == "tool" && r.tokens > 0).collect();
    let mut tools: Vec<ToolError> = measured
        .iter()
        .take(TOOLS)
        .map(|r| ToolError { tool: r.key.clone(), error: r.error * 100.0, tokens: r.tokens })
        .collect();
    tools.sort_by(|a, b| a.error.total_cmp(&b.error).then_with(|| a.tool.cmp(&b.tool)));
    let which = if measured.len() > TOOLS {
        format!("the {TOOLS} of {} tools with the most tokens", measured.len())
    } else {
        "every tool".to_owned()
    };
    CalibrationChart {
        title: format!("{TITLE}: {estimator}'s error, {which}"),
        x_desc: format!(
            "{estimator} error against real {} (estimate / real − 1; negative: under-counts)",
            c.reference()
        ),
        tools,
        overall: mine().find(|r| r.group == "all" && r.tokens > 0).map(|r| r.error * 100.0),
    }
}

/// `v` percent with its sign and one decimal.
fn signed(v: f64) -> String {
    format!("{v:+.1}%")
}

impl CalibrationChart {
    /// The x range: 0 and every error (and the overall one), with room beyond for the value labels.
    pub fn x_range(&self) -> (f64, f64) {
        let values = || self.tools.iter().map(|t| t.error).chain(self.overall);
        let lo = values().fold(0.0, f64::min);
        let hi = values().fold(0.0, f64::max);
        let pad = (hi - lo).max(1.0) * 0.14;
        let round = |v: f64| (v / 10.0).ceil() * 10.0;
        let lo = if lo < 0.0 { -round(-lo + pad) } else { 0.0 };
        let hi = if hi > 0.0 { round(hi + pad) } else { 0.0 };
        (lo, if hi - lo < 1e-9 { 10.0 } else { hi })
    }
}

impl Chart for CalibrationChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn size(&self) -> (u32, u32) {
        (WIDTH, FRAME + ROW * (self.tools.len().max(1) as u32 + 1))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let label_style = TextStyle::from((FONT, LABEL_SIZE).into_font());
        let max_label = WIDTH * MAX_LABEL_SHARE / 100;
        let mut names = Vec::with_capacity(self.tools.len());
        let mut widest = 0;
        for t in &self.tools {
            let mut name = t.tool.clone();
            let mut chars = name.chars().count();
            while chars > 5 && root.estimate_text_size(&name, &label_style)?.0 > max_label {
                chars -= 1;
                name = shorten_middle(&t.tool, chars);
            }
            widest = widest.max(root.estimate_text_size(&name, &label_style)?.0);
            names.push(name);
        }
        let (lo, hi) = self.x_range();
        let n = self.tools.len().max(1) as f64;
        // A row above the bars holds the reference's label.
        let top = n + 1.0;
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, TITLE_SIZE))
            .margin(12)
            .margin_right(24)
            .x_label_area_size(48)
            .y_label_area_size(widest + 14)
            .build_cartesian_2d(percent_axis(lo, hi, 12), 0f64..top)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(&self.x_desc)
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, LABEL_SIZE))
            .draw()?;
        let row_y = |k: usize| n - 1.0 - k as f64;
        for (k, (t, name)) in self.tools.iter().zip(&names).enumerate() {
            let y = row_y(k);
            let color = series_color(if t.error < 0.0 { UNDER } else { OVER });
            chart.draw_series([Rectangle::new([(0.0, y + 0.18), (t.error, y + 0.82)], color.filled())])?;
            let yc = chart.backend_coord(&(0.0, y + 0.5)).1;
            let plot_left = chart.plotting_area().get_pixel_range().0.start;
            let name_style = label_style.pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(name.clone(), (plot_left - 8, yc), name_style))?;
            let end = chart.backend_coord(&(t.error, y + 0.5)).0;
            let (dx, h) = if t.error < 0.0 { (-4, HPos::Right) } else { (4, HPos::Left) };
            let value_style = label_style.pos(Pos::new(h, VPos::Center));
            root.draw(&Text::new(signed(t.error), (end + dx, yc), value_style))?;
        }
        chart.draw_series([PathElement::new([(0.0, 0.0), (0.0, n)], BLACK.stroke_width(1))])?;
        if let Some(all) = self.overall {
            chart.draw_series(DashedLineSeries::new(
                [(all, 0.0), (all, n)],
                MARK_DASH.0,
                MARK_DASH.1,
                MARK_COLOR.stroke_width(2),
            ))?;
            let (x, y) = chart.backend_coord(&(all, n + 0.5));
            let style = label_style.color(&MARK_COLOR).pos(Pos::new(HPos::Center, VPos::Center));
            root.draw(&Text::new(format!("all tool outputs: {}", signed(all)), (x, y), style))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::calibration::CalibrationRow;
    use crate::chart::{Chart, has_text, svg};

    fn row(estimator: &str, group: &str, key: &str, tokens: u64, error: f64) -> CalibrationRow {
        CalibrationRow {
            estimator: estimator.into(),
            group: group.into(),
            key: key.into(),
            tokens,
            error,
            ..Default::default()
        }
    }

    fn calibration() -> Calibration {
        Calibration {
            tokenizer: "o200k".into(),
            rows: vec![
                row("len/4", "all", "all", 400, -0.2),
                row("len/4", "tool", "Read", 200, -0.1),
                row("len/4", "tool", "update_reservation_passengers", 100, -0.46),
                row("len/4", "tool", "transfer_to_human_agents", 60, 1.0),
                row("len/4", "tool", "never_counted", 0, 0.0),
                row("len/4", "kind", "code", 300, -0.2),
                row("gemini", "tool", "Read", 200, 0.5),
            ],
            provider_scaled: false,
        }
    }

    #[test]
    fn the_first_estimators_error_per_tool_sorted_from_most_under_to_most_over() {
        let c = prepare(&calibration());
        let tools: Vec<(&str, f64)> = c.tools.iter().map(|t| (t.tool.as_str(), t.error)).collect();
        let expected =
            [("update_reservation_passengers", -46.0), ("Read", -10.0), ("transfer_to_human_agents", 100.0)];
        assert_eq!(tools.len(), expected.len(), "{tools:?}");
        for ((tool, error), (want, want_error)) in tools.iter().zip(expected) {
            assert_eq!(*tool, want);
            assert!((error - want_error).abs() < 1e-9, "{tool}: {error}");
        }
        assert!((c.overall.unwrap() + 20.0).abs() < 1e-9);
        assert_eq!(c.title, "Estimate versus real tokens per tool: len/4's error, every tool");
        let (lo, hi) = c.x_range();
        assert!(lo <= -46.0 && hi >= 100.0 && lo > -100.0 && hi <= 130.0, "{lo}..{hi}");
    }

    #[test]
    fn the_svg_has_every_tool_name_whole_and_each_error() {
        let svg = svg(&prepare(&calibration())).unwrap();
        for needle in [
            "update_reservation_passengers",
            "transfer_to_human_agents",
            "Read",
            "-46.0%",
            "-10.0%",
            "+100.0%",
            "all tool outputs: -20.0%",
            "len/4 error against real o200k tokens (estimate / real − 1; negative: under-counts)",
        ] {
            assert!(has_text(&svg, needle), "missing {needle}");
        }
        assert!(!has_text(&svg, "never_counted"), "a tool with no real tokens has no error");
    }

    #[test]
    fn a_name_wider_than_the_label_column_loses_its_middle_and_the_chart_grows_with_its_rows() {
        let mut c = calibration();
        let long = "x".repeat(300);
        c.rows.push(row("len/4", "tool", &long, 10, 0.1));
        let chart = prepare(&c);
        assert_eq!(chart.size().1, FRAME + ROW * (4 + 1));
        let svg = svg(&chart).unwrap();
        assert!(!svg.contains(&long));
        assert!(svg.contains("xxxxx…xxxxx"), "the long name shortened in its middle");
        assert!(has_text(&svg, "update_reservation_passengers"), "the others stay whole");
    }

    #[test]
    fn a_chart_of_the_tools_with_the_most_tokens_says_so_in_its_title() {
        let mut many = calibration();
        for i in 0..TOOLS {
            many.rows.insert(4, row("len/4", "tool", &format!("tool{i}"), 50 - i as u64, 0.01 * i as f64));
        }
        let c = prepare(&many);
        assert_eq!(c.tools.len(), TOOLS);
        assert_eq!(
            c.title,
            format!("{TITLE}: len/4's error, the {TOOLS} of {} tools with the most tokens", TOOLS + 3)
        );
    }

    #[test]
    fn with_no_tool_results_a_placeholder_says_there_is_nothing_to_calibrate() {
        assert_eq!(prepare_or_placeholder(&calibration()), OrPlaceholder::Chart(prepare(&calibration())));
        let empty = Calibration { tokenizer: "o200k".into(), rows: Vec::new(), provider_scaled: false };
        let c = prepare_or_placeholder(&empty);
        assert_eq!(c.not_drawn(), Some("the inputs hold no tool results to calibrate"));
        let svg = svg(&c).unwrap();
        assert!(has_text(&svg, TITLE));
        assert!(has_text(&svg, "Not drawn: the inputs hold no tool results to calibrate."));
    }

    #[test]
    fn under_the_estimate_tokenizer_a_placeholder_says_there_are_no_real_tokens() {
        let estimated = Calibration { tokenizer: "estimate".into(), ..calibration() };
        let c = prepare_or_placeholder(&estimated);
        let reason = "with --tokenizer estimate there are no real tokens to set the estimates against \
                      (--tokenizer o200k or cl100k counts them)";
        assert_eq!(c.not_drawn(), Some(reason));
        assert_eq!(c.title(), TITLE);
    }
}
