//! The sweep chart: savings and the share of results split, per threshold, with the recommended
//! threshold marked.
//!
//! The x axis is log2 of the threshold, so a gap reads as the ratio it is: the default thresholds
//! (0, then 64 to 65536 doubling) come out evenly spaced, as they did on the category axis this
//! replaced, while `--thresholds 100,200,300,50000` no longer draws 300 → 50000 as wide as
//! 100 → 200. A log axis has no place for 0, the threshold that splits every result, so 0 is drawn
//! one doubling below the smallest positive threshold and the axis description says so. Tick
//! labels are the thresholds tried; one that would run into the label before it is left out.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    AXIS_SIZE, Chart, DrawResult, FONT, LABEL_SIZE, MARK_COLOR, MARK_DASH, OrPlaceholder, TITLE_SIZE,
    TickedAxis, series_color,
};
use crate::analysis::sweep::Sweep;

/// How far below the smallest positive threshold 0 is drawn, in doublings.
pub const ZERO_DOUBLINGS: f64 = 1.0;
/// Pixels kept free between two threshold labels.
const LABEL_GAP: i32 = 8;

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
    /// Savings per threshold, in percent.
    pub savings: Vec<f64>,
    /// Share of results split per threshold, in percent.
    pub split_share: Vec<f64>,
    /// Index of the recommended threshold.
    pub recommended: Option<usize>,
    /// The tolerance as a band of savings, in percent: `(floor, best)`, and the input tokens it
    /// allows beyond the best's.
    pub band: Option<(f64, f64, u64)>,
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
    let rec = sweep.recommendation.as_ref().map(|r| r.threshold);
    let thresholds: Vec<usize> = sweep.rows.iter().map(|r| r.threshold).collect();
    SweepChart {
        title: title(sweep),
        x_desc: x_desc(&thresholds),
        positions: positions(&thresholds),
        thresholds,
        savings: sweep.rows.iter().map(|r| r.savings * 100.0).collect(),
        split_share: sweep.rows.iter().map(|r| r.split_share * 100.0).collect(),
        recommended: sweep.rows.iter().position(|r| Some(r.threshold) == rec),
        band: sweep.recommendation.as_ref().map(|r| {
            let allowed = r.tolerance * r.best_savings.abs();
            let tokens = (allowed * sweep.baseline_total_tokens as f64).round() as u64;
            ((r.best_savings - allowed) * 100.0, r.best_savings * 100.0, tokens)
        }),
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

impl SweepChart {
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
}

impl Chart for SweepChart {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let low = self.savings.iter().copied().fold(0.0, f64::min);
        let y_min = if low < 0.0 { (low / 10.0).floor() * 10.0 } else { 0.0 };
        let ticks = self.positions.iter().zip(&self.thresholds).map(|(p, t)| (*p, t.to_string())).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, TITLE_SIZE))
            .margin(12)
            .margin_right(32)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(
                TickedAxis::new(x_range(&self.positions), ticks, Vec::new()),
                y_min..100f64,
            )?;
        let shown = self.uncrowded(root, |x| chart.backend_coord(&(x, y_min)).0)?;
        let label = |x: &f64| shown.iter().find(|(p, _)| p == x).map_or_else(String::new, |(_, l)| l.clone());
        chart
            .configure_mesh()
            .x_label_formatter(&label)
            .y_label_formatter(&|v| format!("{v:.0}%"))
            .x_desc(&self.x_desc)
            .y_desc("percent")
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, LABEL_SIZE))
            .draw()?;
        if let Some((floor, best, tokens)) = self.band {
            let (lo, hi) = (x_range(&self.positions).start, x_range(&self.positions).end);
            let fill = MARK_COLOR.mix(0.15);
            chart
                .draw_series([Rectangle::new([(lo, floor), (hi, best)], fill.filled())])?
                .label(format!("tolerance: within {tokens} input tokens of the best"))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], fill.filled()));
        }
        for (s, (name, values)) in [
            ("savings against the sessions as recorded", &self.savings),
            ("results split", &self.split_share),
        ]
        .into_iter()
        .enumerate()
        {
            let color = series_color(s + 1);
            chart
                .draw_series(
                    LineSeries::new(
                        self.positions.iter().copied().zip(values.iter().copied()),
                        color.stroke_width(2),
                    )
                    .point_size(3),
                )?
                .label(name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], color.stroke_width(2)));
        }
        if let Some(i) = self.recommended {
            let label = format!("recommended: {} bytes", self.thresholds[i]);
            let x = self.positions[i];
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, y_min), (x, 100.0)],
                    MARK_DASH.0,
                    MARK_DASH.1,
                    MARK_COLOR.stroke_width(2),
                ))?
                .label(label)
                .legend(super::mark_legend);
        }
        super::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
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
            rows: vec![row(0, 0.5, 1.0), row(256, 0.45, 0.5), row(4096, -0.1, 0.1)],
            recommendation: Some(Recommendation {
                threshold: 256,
                savings: 0.45,
                best_threshold: 0,
                best_savings: 0.5,
                tolerance: 0.1,
                next: None,
                reason: String::new(),
            }),
            per_tool: Vec::new(),
        }
    }

    #[test]
    fn data_is_in_percent_with_the_recommendation_indexed() {
        let c = prepare(&sweep());
        assert_eq!(c.thresholds, [0, 256, 4096]);
        // log2, with 0 a doubling below 256.
        assert_eq!(c.positions, [7.0, 8.0, 12.0]);
        let expected = [50.0, 45.0, -10.0];
        assert!(c.savings.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-9), "{:?}", c.savings);
        assert_eq!(c.split_share, [100.0, 50.0, 10.0]);
        assert_eq!(c.recommended, Some(1));
        let r = sweep().recommendation.unwrap();
        let (floor, best, tokens) = c.band.expect("a recommendation has a tolerance band");
        let svg = super::super::svg(&c).unwrap();
        let label = format!("tolerance: within {tokens} input tokens of the best");
        assert!(super::super::has_text(&svg, &label), "the band is in the legend: {label}");
        assert!((best - r.best_savings * 100.0).abs() < 1e-9);
        assert!((best - floor - r.tolerance * r.best_savings.abs() * 100.0).abs() < 1e-9);
        assert_eq!(c.title, "Threshold sweep under keep-turns:n=3");
    }

    #[test]
    fn the_svg_has_the_title_axes_series_and_the_mark() {
        let svg = super::super::svg(&prepare(&sweep())).unwrap();
        for needle in [
            "Threshold sweep under keep-turns:n=3",
            "SUMMARY_THRESHOLD (bytes, log scale; 0 is drawn a doubling below 256)",
            "percent",
            "savings against the sessions as recorded",
            "results split",
            "recommended: 256 bytes",
            "4096",
        ] {
            assert!(super::super::has_text(&svg, needle), "missing {needle}");
        }
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
        assert!(!super::super::has_text(&svg, "percent"), "bare axes");
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
