//! The sweep chart, in two panels over one threshold axis. The large one draws the savings (share
//! of the baseline's input tokens) per threshold, the tolerance band the recommendation may fall
//! in (from the best savings down by the tolerance), and the best and recommended thresholds as
//! labelled points. The small one below draws the share of tool outputs kept whole (under the
//! threshold, so not split) on an axis of its own: two different percentages never share one
//! axis, where their crossing would read as meaning something.
//!
//! The x axis is log2 of the threshold, so a gap reads as the ratio it is: the default thresholds
//! (0, then 64 to 65536 doubling) come out evenly spaced, while `--thresholds 100,200,300,50000`
//! does not draw 300 → 50000 as wide as 100 → 200. A log axis has no place for 0, the threshold
//! that splits every result, so 0 is drawn one doubling below the smallest positive threshold and
//! the axis description says so. Tick labels are the thresholds tried; one that would run into the
//! label before it is left out.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    AXIS_SIZE, Chart, DrawResult, FONT, LABEL_SIZE, MARK_COLOR, MARK_DASH, OrPlaceholder, TITLE_SIZE,
    TickedAxis, nice_ceiling, percent_axis, series_color, thousands,
};
use crate::analysis::sweep::Sweep;

/// How far below the smallest positive threshold 0 is drawn, in doublings.
pub const ZERO_DOUBLINGS: f64 = 1.0;
/// Pixels kept free between two threshold labels.
const LABEL_GAP: i32 = 8;
/// Pixels from one line of a two-line label to the next.
const LINE: i32 = 18;
/// The chart's height: the savings panel, then the kept-whole panel ([`SAVINGS_PANEL`] of it).
const HEIGHT: u32 = 600;
/// The savings panel's share of the height, in percent.
const SAVINGS_PANEL: u32 = 72;
/// Width of the y label area of both panels, so their plots line up.
const Y_LABELS: u32 = 64;
/// The savings line's series colour, and the kept-whole line's: two quantities, two colours.
const SAVINGS_SERIES: usize = 1;
const KEPT_SERIES: usize = 4;

/// Data of the sweep chart.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepChart {
    /// Caption.
    pub title: String,
    /// X axis description.
    pub x_desc: String,
    /// Thresholds, ascending.
    pub thresholds: Vec<usize>,
    /// Where each threshold is drawn: its log2, 0 at [`ZERO_DOUBLINGS`] below the smallest
    /// positive one.
    pub positions: Vec<f64>,
    /// Savings per threshold, in percent of the baseline's input tokens.
    pub savings: Vec<f64>,
    /// Share of tool outputs kept whole (not split) per threshold, in percent of the outputs.
    pub kept_whole: Vec<f64>,
    /// Index of the recommended threshold.
    pub recommended: Option<usize>,
    /// Index of the threshold with the best savings.
    pub best: Option<usize>,
    /// The tolerance as a band of savings, labelled in tokens and USD.
    pub band: Option<Band>,
}

/// The tolerance band: the savings the recommendation may fall in, and the same in absolute terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    /// The least savings within the tolerance, in percent.
    pub floor: f64,
    /// The best savings, in percent.
    pub best: f64,
    /// The input tokens the tolerance allows beyond the best's.
    pub tokens: u64,
    /// The input tokens the recommended threshold sends beyond the best's.
    pub extra_tokens: u64,
    /// What the recommended threshold costs beyond the best's, in USD, where priced.
    pub extra_usd: Option<f64>,
}

impl Band {
    /// The band's labels: what it allows, in tokens, and what the recommendation takes of it, in
    /// tokens and USD.
    pub fn labels(&self) -> [String; 2] {
        let tokens = format!("{} input tokens", thousands(self.extra_tokens));
        let taken = match self.extra_usd {
            Some(usd) if usd < 0.0 => format!("{tokens} more, {} less", crate::analysis::sweep::usd(-usd)),
            Some(usd) => format!("{tokens} and {} more", crate::analysis::sweep::usd(usd)),
            None => format!("{tokens} more"),
        };
        [
            format!("tolerance band: within {} input tokens of the best", thousands(self.tokens)),
            format!("recommended: {taken} than the best"),
        ]
    }
}

/// The chart of a sweep, or a placeholder when there were no tool results to split: every
/// threshold would draw 0% savings of nothing.
pub fn prepare_or_placeholder(sweep: &Sweep) -> OrPlaceholder<SweepChart> {
    let empty = sweep.rows.iter().all(|r| r.tool_results == 0);
    OrPlaceholder::unless(
        empty.then(|| "the inputs hold no tool results to sweep".to_owned()),
        || title(sweep),
        || prepare(sweep),
    )
}

fn title(sweep: &Sweep) -> String {
    format!("Threshold sweep under {}", sweep.policy)
}

/// Prepares the chart from a sweep.
pub fn prepare(sweep: &Sweep) -> SweepChart {
    let rec = sweep.recommendation.as_ref();
    let thresholds: Vec<usize> = sweep.rows.iter().map(|r| r.threshold).collect();
    let index = |t: Option<usize>| t.and_then(|t| thresholds.iter().position(|&x| x == t));
    SweepChart {
        title: title(sweep),
        x_desc: x_desc(&thresholds),
        positions: positions(&thresholds),
        savings: sweep.rows.iter().map(|r| r.savings * 100.0).collect(),
        kept_whole: sweep.rows.iter().map(|r| 100.0 - r.split_share * 100.0).collect(),
        recommended: index(rec.map(|r| r.threshold)),
        best: index(rec.map(|r| r.best_threshold)),
        band: rec.map(|r| Band {
            floor: (r.best_savings - r.tolerance * r.best_savings.abs()) * 100.0,
            best: r.best_savings * 100.0,
            tokens: r.tolerance_tokens,
            extra_tokens: r.extra_input_tokens,
            extra_usd: r.extra_cost_usd,
        }),
        thresholds,
    }
}

/// The x position of each threshold (see [`SweepChart::positions`]).
pub fn positions(thresholds: &[usize]) -> Vec<f64> {
    let zero = smallest_positive(thresholds).map_or(0.0, |t| (t as f64).log2() - ZERO_DOUBLINGS);
    thresholds.iter().map(|&t| if t == 0 { zero } else { (t as f64).log2() }).collect()
}

fn smallest_positive(thresholds: &[usize]) -> Option<usize> {
    thresholds.iter().copied().filter(|t| *t > 0).min()
}

/// The x axis description: the scale, and where 0 is when it is drawn off the scale.
fn x_desc(thresholds: &[usize]) -> String {
    match smallest_positive(thresholds).filter(|_| thresholds.contains(&0)) {
        Some(smallest) => {
            format!("SUMMARY_THRESHOLD (bytes, log scale; 0 is drawn a doubling below {smallest})")
        }
        None => "SUMMARY_THRESHOLD (bytes, log scale)".to_owned(),
    }
}

/// The x range: from the first position to the last, a unit wide around a single one.
fn x_range(positions: &[f64]) -> std::ops::Range<f64> {
    let lo = positions.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = positions.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        0.0..1.0
    } else if hi - lo < 1e-9 {
        lo - 0.5..hi + 0.5
    } else {
        lo..hi
    }
}

/// `v` percent, one decimal.
fn percent(v: f64) -> String {
    format!("{v:.1}%")
}

impl SweepChart {
    /// The savings axis: from 0 (or below the lowest savings) to a round value a quarter above the
    /// highest savings or band, leaving room for the labels over the data. Its own range, never the
    /// kept-whole panel's 0–100%.
    pub fn savings_range(&self) -> (f64, f64) {
        let band_top = self.band.as_ref().map_or(0.0, |b| b.best);
        let high = self.savings.iter().copied().fold(band_top, f64::max);
        let low = self.savings.iter().copied().fold(0.0, f64::min);
        let lo = if low < 0.0 { -nice_ceiling(-low) } else { 0.0 };
        (lo, nice_ceiling(high.max(1.0) * 1.25))
    }

    /// The threshold labels that fit, left to right: each one that would run into the one kept
    /// before it is left out (a tick still marks it).
    fn uncrowded<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        to_pixels: impl Fn(f64) -> i32,
    ) -> Result<Vec<(f64, String)>, DrawingAreaErrorKind<DB::ErrorType>> {
        let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Center, VPos::Top));
        let mut kept = Vec::new();
        let mut right_of_last = i32::MIN;
        for (&position, threshold) in self.positions.iter().zip(&self.thresholds) {
            let label = threshold.to_string();
            let half = i32::try_from(root.estimate_text_size(&label, &style)?.0 / 2).unwrap_or(i32::MAX);
            let x = to_pixels(position);
            if x.saturating_sub(half) >= right_of_last.saturating_add(LABEL_GAP) {
                right_of_last = x.saturating_add(half);
                kept.push((position, label));
            }
        }
        Ok(kept)
    }

    /// The labels of the recommended and best points, each with its index: one label when they
    /// are the same threshold.
    pub fn point_labels(&self) -> Vec<(usize, String)> {
        let say = |what: &str, i: usize| {
            format!("{what}: {} bytes, saves {}", self.thresholds[i], percent(self.savings[i]))
        };
        match (self.recommended, self.best) {
            (Some(r), Some(b)) if r == b => vec![(r, say("recommended and best", r))],
            (r, b) => r
                .map(|r| (r, say("recommended", r)))
                .into_iter()
                .chain(b.map(|b| (b, say("best", b))))
                .collect(),
        }
    }

    /// The savings panel, with the band, the points and their labels.
    fn draw_savings<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (lo, hi) = self.savings_range();
        let xr = x_range(&self.positions);
        let mut chart = ChartBuilder::on(area)
            .caption(&self.title, (FONT, TITLE_SIZE))
            .margin(12)
            .margin_right(32)
            .margin_bottom(4)
            .x_label_area_size(6)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(
                TickedAxis::new(xr.clone(), self.x_ticks(), Vec::new()),
                percent_axis(lo, hi, 9),
            )?;
        chart
            .configure_mesh()
            .x_label_formatter(&|_| String::new())
            .y_desc("savings (% of input tokens)")
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, LABEL_SIZE))
            .draw()?;
        let text = |h, v| TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(h, v));
        if let Some(band) = &self.band {
            chart.draw_series([Rectangle::new(
                [(xr.start, band.floor), (xr.end, band.best)],
                MARK_COLOR.mix(0.18).filled(),
            )])?;
            let (right, top) = chart.backend_coord(&(xr.end, band.best));
            let bottom = chart.backend_coord(&(xr.end, band.floor)).1;
            // Below the band when the line ends in it, else above it; the two lines one under the other.
            let end_in_band = self.savings.last().is_some_and(|s| *s >= band.floor);
            let (y, v) = if end_in_band { (bottom + 4, VPos::Top) } else { (top - 4 - LINE, VPos::Bottom) };
            for (k, label) in band.labels().into_iter().enumerate() {
                let y = y + LINE * k as i32;
                area.draw(&Text::new(label, (right - 4, y), text(HPos::Right, v)))?;
            }
        }
        let color = series_color(SAVINGS_SERIES);
        chart.draw_series(LineSeries::new(
            self.positions.iter().copied().zip(self.savings.iter().copied()),
            color.stroke_width(2),
        ))?;
        chart.draw_series(
            self.positions.iter().zip(&self.savings).map(|(x, y)| Circle::new((*x, *y), 3, color.filled())),
        )?;
        if let Some(i) = self.recommended {
            let x = self.positions[i];
            chart.draw_series(DashedLineSeries::new(
                [(x, lo), (x, hi)],
                MARK_DASH.0,
                MARK_DASH.1,
                MARK_COLOR.stroke_width(2),
            ))?;
        }
        let (plot_x, plot_y) = chart.plotting_area().get_pixel_range();
        for (row, (i, label)) in self.point_labels().into_iter().enumerate() {
            let (x, y) = chart.backend_coord(&(self.positions[i], self.savings[i]));
            chart.draw_series([Circle::new(
                (self.positions[i], self.savings[i]),
                6,
                MARK_COLOR.stroke_width(2),
            )])?;
            let label_y = plot_y.start + 14 + 20 * row as i32;
            area.draw(&PathElement::new([(x, label_y + 8), (x, y - 7)], MARK_COLOR.stroke_width(1)))?;
            // Beside its point, to the right in the left part of the plot and to the left beyond.
            let right_side = x < plot_x.start + (plot_x.end - plot_x.start) * 3 / 5;
            let (dx, h) = if right_side { (6, HPos::Left) } else { (-6, HPos::Right) };
            area.draw(&Text::new(label, (x + dx, label_y), text(h, VPos::Center)))?;
        }
        Ok(())
    }

    /// The threshold ticks, every one labelled (the labels that fit are chosen when drawn).
    fn x_ticks(&self) -> Vec<(f64, String)> {
        self.positions.iter().zip(&self.thresholds).map(|(p, t)| (*p, t.to_string())).collect()
    }

    /// The panel of outputs kept whole, with the threshold axis and its labels.
    fn draw_kept<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let xr = x_range(&self.positions);
        let mut chart = ChartBuilder::on(area)
            .caption("tool outputs kept whole (not split), % of outputs", (FONT, AXIS_SIZE))
            .margin(12)
            .margin_right(32)
            .margin_top(4)
            .x_label_area_size(44)
            .y_label_area_size(Y_LABELS)
            .build_cartesian_2d(
                TickedAxis::new(xr, self.x_ticks(), Vec::new()),
                percent_axis(0.0, 100.0, 3),
            )?;
        let shown = self.uncrowded(area, |x| chart.backend_coord(&(x, 0.0)).0)?;
        let label = |x: &f64| shown.iter().find(|(p, _)| p == x).map_or_else(String::new, |(_, l)| l.clone());
        chart
            .configure_mesh()
            .x_label_formatter(&label)
            .x_desc(&self.x_desc)
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, LABEL_SIZE))
            .draw()?;
        let color = series_color(KEPT_SERIES);
        chart.draw_series(
            LineSeries::new(
                self.positions.iter().copied().zip(self.kept_whole.iter().copied()),
                color.stroke_width(2),
            )
            .point_size(3),
        )?;
        if let Some(i) = self.recommended {
            let x = self.positions[i];
            chart.draw_series(DashedLineSeries::new(
                [(x, 0.0), (x, 100.0)],
                MARK_DASH.0,
                MARK_DASH.1,
                MARK_COLOR.stroke_width(2),
            ))?;
        }
        Ok(())
    }
}

impl Chart for SweepChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn size(&self) -> (u32, u32) {
        (super::WIDTH, HEIGHT)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (savings, kept) = root.split_vertically(HEIGHT * SAVINGS_PANEL / 100);
        self.draw_savings(&savings)?;
        self.draw_kept(&kept)
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::sweep::{Recommendation, SweepRow};

    fn sweep() -> Sweep {
        let row = |threshold, savings, split_share| SweepRow {
            threshold,
            savings,
            split_share,
            ..Default::default()
        };
        Sweep {
            policy: "keep-turns:n=3".into(),
            conversations: 1,
            requests: 4,
            baseline_total_tokens: 100,
            baseline_peak_tokens: 40,
            baseline_cost_usd: 0.5,
            rows: vec![row(0, 0.5, 1.0), row(256, 0.45, 0.5), row(4096, -0.1, 0.1)],
            recommendation: Some(Recommendation {
                threshold: 256,
                savings: 0.45,
                best_threshold: 0,
                best_savings: 0.5,
                tolerance: 0.1,
                tolerance_tokens: 5,
                extra_input_tokens: 5,
                extra_cost_usd: Some(0.0125),
                next: None,
                reason: String::new(),
            }),
            per_tool: Vec::new(),
        }
    }

    #[test]
    fn data_is_in_percent_with_the_best_and_recommended_thresholds_indexed() {
        let c = prepare(&sweep());
        assert_eq!(c.thresholds, [0, 256, 4096]);
        // log2, with 0 a doubling below 256.
        assert_eq!(c.positions, [7.0, 8.0, 12.0]);
        let expected = [50.0, 45.0, -10.0];
        assert!(c.savings.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-9), "{:?}", c.savings);
        // Kept whole: the outputs not split, 100% less the share split.
        assert_eq!(c.kept_whole, [0.0, 50.0, 90.0]);
        assert_eq!((c.recommended, c.best), (Some(1), Some(0)));
        let r = sweep().recommendation.unwrap();
        let band = c.band.expect("a recommendation has a tolerance band");
        assert!((band.best - r.best_savings * 100.0).abs() < 1e-9);
        assert!((band.best - band.floor - r.tolerance * r.best_savings.abs() * 100.0).abs() < 1e-9);
        assert_eq!((band.tokens, band.extra_tokens, band.extra_usd), (5, 5, Some(0.0125)));
        assert_eq!(c.title, "Threshold sweep under keep-turns:n=3");
    }

    #[test]
    fn savings_and_outputs_kept_whole_never_share_a_percent_axis() {
        let c = prepare(&sweep());
        // The savings axis is fitted to the savings (-10% to 50%), not the kept-whole 0–100%.
        assert_eq!(c.savings_range(), (-10.0, 80.0));
        let svg = super::super::svg(&c).unwrap();
        for tick in ["20%", "80%"] {
            assert!(super::super::has_text(&svg, tick), "savings axis: no {tick}");
        }
        // The kept-whole panel has its own 0–100% axis, with its own caption.
        for tick in ["0%", "50%", "100%"] {
            assert!(super::super::has_text(&svg, tick), "kept-whole axis: no {tick}");
        }
        assert!(super::super::has_text(&svg, "tool outputs kept whole (not split), % of outputs"));
        assert!(super::super::has_text(&svg, "savings (% of input tokens)"));
        assert!(!super::super::has_text(&svg, "percent"), "one axis for both");
    }

    #[test]
    fn the_svg_labels_the_best_and_recommended_points_and_the_band() {
        let svg = super::super::svg(&prepare(&sweep())).unwrap();
        for needle in [
            "Threshold sweep under keep-turns:n=3",
            "SUMMARY_THRESHOLD (bytes, log scale; 0 is drawn a doubling below 256)",
            "recommended: 256 bytes, saves 45.0%",
            "best: 0 bytes, saves 50.0%",
            "tolerance band: within 5 input tokens of the best",
            "recommended: 5 input tokens and $0.0125 more than the best",
            "4096",
        ] {
            assert!(super::super::has_text(&svg, needle), "missing {needle}");
        }
        // No legend box over the plot: every mark is labelled where it is.
        assert!(!super::super::has_text(&svg, "results split"));
        // One label when the recommendation is the best threshold.
        let mut same = sweep();
        same.recommendation.as_mut().unwrap().best_threshold = 256;
        let c = prepare(&same);
        assert_eq!(c.point_labels(), [(1, "recommended and best: 256 bytes, saves 45.0%".to_owned())]);
        let svg = super::super::svg(&c).unwrap();
        assert!(super::super::has_text(&svg, "recommended and best: 256 bytes, saves 45.0%"));
        assert!(!super::super::has_text(&svg, "best: 0 bytes, saves 50.0%"));
        // A recommendation that costs less than the best says so; one not priced gives tokens only.
        let mut cheaper = sweep();
        cheaper.recommendation.as_mut().unwrap().extra_cost_usd = Some(-1.5);
        let [_, taken] = prepare(&cheaper).band.unwrap().labels();
        assert_eq!(taken, "recommended: 5 input tokens more, $1.50 less than the best");
        cheaper.recommendation.as_mut().unwrap().extra_cost_usd = None;
        let [_, taken] = prepare(&cheaper).band.unwrap().labels();
        assert_eq!(taken, "recommended: 5 input tokens more than the best");
        // Without a recommendation there is nothing to label.
        let none = Sweep { recommendation: None, ..sweep() };
        assert!(prepare(&none).point_labels().is_empty());
    }

    fn with_thresholds(thresholds: &[usize]) -> Sweep {
        let rows = thresholds.iter().map(|&threshold| SweepRow { threshold, ..Default::default() }).collect();
        Sweep { rows, recommendation: None, ..sweep() }
    }

    #[test]
    fn thresholds_are_spaced_by_their_ratio_not_their_place() {
        let c = prepare(&with_thresholds(&[100, 200, 300, 50_000]));
        let gap = |i: usize| c.positions[i + 1] - c.positions[i];
        // 100 → 200 is one doubling, 300 → 50000 more than seven.
        assert!((gap(0) - 1.0).abs() < 1e-9, "{:?}", c.positions);
        assert!(gap(2) > 7.0 * gap(0), "{:?}", c.positions);
        assert_eq!(c.x_desc, "SUMMARY_THRESHOLD (bytes, log scale)");
        // The default thresholds, 0 then 64 to 65536 doubling, stay evenly spaced.
        let defaults: Vec<usize> = std::iter::once(0).chain((6..=16).map(|k| 1 << k)).collect();
        let c = prepare(&with_thresholds(&defaults));
        assert!(c.positions.windows(2).all(|w| (w[1] - w[0] - 1.0).abs() < 1e-9), "{:?}", c.positions);
        assert_eq!(c.x_desc, "SUMMARY_THRESHOLD (bytes, log scale; 0 is drawn a doubling below 64)");
    }

    #[test]
    fn with_no_tool_results_a_placeholder_says_there_is_nothing_to_sweep() {
        let c = prepare_or_placeholder(&with_thresholds(&[0, 256]));
        assert_eq!(c.title(), "Threshold sweep under keep-turns:n=3");
        assert_eq!(c.not_drawn(), Some("the inputs hold no tool results to sweep"));
        let svg = super::super::svg(&c).unwrap();
        assert!(super::super::has_text(&svg, "Not drawn: the inputs hold no tool results to sweep."));
        assert!(!super::super::has_text(&svg, "savings (% of input tokens)"), "bare axes");
        let mut one = with_thresholds(&[0, 256]);
        one.rows[0].tool_results = 1;
        assert_eq!(prepare_or_placeholder(&one), OrPlaceholder::Chart(prepare(&one)));
    }

    #[test]
    fn threshold_labels_that_would_run_together_are_left_out() {
        let svg = super::super::svg(&prepare(&with_thresholds(&[100, 101, 102, 300, 50_000]))).unwrap();
        for shown in ["100", "300", "50000"] {
            assert!(super::super::has_text(&svg, shown), "missing {shown}");
        }
        for crowded in ["101", "102"] {
            assert!(!super::super::has_text(&svg, crowded), "{crowded} drawn over 100");
        }
    }
}
