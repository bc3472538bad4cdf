//! The sweep chart: savings and the share of results split, per threshold (evenly spaced, since the
//! thresholds are usually log-spaced and start at 0), with the recommended threshold marked.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    AXIS_SIZE, Chart, DrawResult, FONT, LABEL_SIZE, MARK_COLOR, MARK_DASH, TITLE_SIZE, series_color,
};
use crate::analysis::sweep::Sweep;

/// Data of the sweep chart.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepChart {
    /// Caption.
    pub title: String,
    /// Thresholds, ascending.
    pub thresholds: Vec<usize>,
    /// Savings per threshold, in percent.
    pub savings: Vec<f64>,
    /// Share of results split per threshold, in percent.
    pub split_share: Vec<f64>,
    /// Index of the recommended threshold.
    pub recommended: Option<usize>,
}

/// Prepares the chart from a sweep.
pub fn prepare(sweep: &Sweep) -> SweepChart {
    let rec = sweep.recommendation.as_ref().map(|r| r.threshold);
    SweepChart {
        title: format!("Threshold sweep under {}", sweep.policy),
        thresholds: sweep.rows.iter().map(|r| r.threshold).collect(),
        savings: sweep.rows.iter().map(|r| r.savings * 100.0).collect(),
        split_share: sweep.rows.iter().map(|r| r.split_share * 100.0).collect(),
        recommended: sweep.rows.iter().position(|r| Some(r.threshold) == rec),
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
        let n = self.thresholds.len();
        let x_max = n.saturating_sub(1).max(1) as i32;
        let low = self.savings.iter().copied().fold(0.0, f64::min);
        let y_min = if low < 0.0 { (low / 10.0).floor() * 10.0 } else { 0.0 };
        let labels = |i: &i32| {
            usize::try_from(*i)
                .ok()
                .and_then(|i| self.thresholds.get(i))
                .map_or(String::new(), |t| t.to_string())
        };
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, TITLE_SIZE))
            .margin(12)
            .margin_right(32)
            .x_label_area_size(44)
            .y_label_area_size(56)
            .build_cartesian_2d(0i32..x_max, y_min..100f64)?;
        chart
            .configure_mesh()
            .x_labels(n.max(2))
            .x_label_formatter(&labels)
            .y_label_formatter(&|v| format!("{v:.0}%"))
            .x_desc("SUMMARY_THRESHOLD (bytes)")
            .y_desc("percent")
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, LABEL_SIZE))
            .draw()?;
        for (s, (name, values)) in
            [("savings against none, nothing split", &self.savings), ("results split", &self.split_share)]
                .into_iter()
                .enumerate()
        {
            let color = series_color(s + 1);
            chart
                .draw_series(
                    LineSeries::new(
                        values.iter().enumerate().map(|(i, v)| (i as i32, *v)),
                        color.stroke_width(2),
                    )
                    .point_size(3),
                )?
                .label(name)
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], color.stroke_width(2)));
        }
        if let Some(i) = self.recommended {
            let label = format!("recommended: {} bytes", self.thresholds[i]);
            chart
                .draw_series(DashedLineSeries::new(
                    [(i as i32, y_min), (i as i32, 100.0)],
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
        let expected = [50.0, 45.0, -10.0];
        assert!(c.savings.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-9), "{:?}", c.savings);
        assert_eq!(c.split_share, [100.0, 50.0, 10.0]);
        assert_eq!(c.recommended, Some(1));
        assert_eq!(c.title, "Threshold sweep under keep-turns:n=3");
    }

    #[test]
    fn the_svg_has_the_title_axes_series_and_the_mark() {
        let svg = super::super::svg(&prepare(&sweep())).unwrap();
        for needle in [
            "Threshold sweep under keep-turns:n=3",
            "SUMMARY_THRESHOLD (bytes)",
            "percent",
            "savings against none, nothing split",
            "results split",
            "recommended: 256 bytes",
            "4096",
        ] {
            assert!(super::super::has_text(&svg, needle), "missing {needle}");
        }
    }
}
