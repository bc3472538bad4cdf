//! The budget timeline of one conversation: the context of every request, stacked by category under
//! the first policy (the `none` baseline in a comparison), one line per policy for its total, and
//! the context window as a horizontal line when it is within twice the largest context (otherwise
//! only the legend names it, so small conversations stay readable).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    AXIS_SIZE, CATEGORY_COLORS, Chart, DrawResult, FONT, LABEL_SIZE, MARK_COLOR, MARK_DASH, TITLE_SIZE,
    Ticks, nice_ceiling, series_color,
};
use crate::model::Tokens;
use crate::result::Run;

/// Data of one timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Caption.
    pub title: String,
    /// Policy whose categories are stacked.
    pub stacked_policy: String,
    /// Non-empty categories of that policy: `(name, tokens per request)`, bottom first.
    pub stacks: Vec<(&'static str, Vec<Tokens>)>,
    /// `(policy, context tokens per request)`.
    pub lines: Vec<(String, Vec<Tokens>)>,
    /// The context window.
    pub window: Tokens,
    /// Whether the window is drawn (it is within twice the largest context).
    pub window_shown: bool,
}

/// Prepares the timeline of one conversation from its runs (one per policy, the first stacked).
pub fn prepare(trace: &str, conversation: &str, runs: &[Run], window: Tokens) -> Timeline {
    let name = std::path::Path::new(trace).file_name().map_or(trace.into(), |n| n.to_string_lossy());
    let requests = runs.first().map_or(0, |r| r.rows.len());
    let title = format!(
        "Context per request: {} ({}, {requests} requests)",
        super::shorten(&name, 40),
        super::shorten(conversation, 24)
    );
    let stacked_policy = runs.first().map(|r| r.summary.policy.clone()).unwrap_or_default();
    let mut stacks = Vec::new();
    if let Some(base) = runs.first() {
        for (i, (category, _)) in crate::result::Categories::default().named().iter().enumerate() {
            let values: Vec<Tokens> = base.rows.iter().map(|r| r.categories.named()[i].1).collect();
            if values.iter().any(|v| *v > 0) {
                stacks.push((*category, values));
            }
        }
    }
    let lines: Vec<(String, Vec<Tokens>)> = runs
        .iter()
        .map(|r| (r.summary.policy.clone(), r.rows.iter().map(|row| row.context_tokens).collect()))
        .collect();
    let peak = lines.iter().flat_map(|(_, v)| v.iter().copied()).max().unwrap_or(0);
    Timeline { title, stacked_policy, stacks, lines, window, window_shown: window <= peak.saturating_mul(2) }
}

impl Timeline {
    /// Largest value drawn (contexts, and the window when shown).
    pub fn top(&self) -> Tokens {
        let peak = self.lines.iter().flat_map(|(_, v)| v.iter().copied()).max().unwrap_or(0);
        if self.window_shown { peak.max(self.window) } else { peak }
    }

    /// Number of requests.
    pub fn requests(&self) -> usize {
        self.lines.first().map_or(0, |(_, v)| v.len())
    }
}

impl Chart for Timeline {
    fn title(&self) -> &str {
        &self.title
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let x_max = self.requests().saturating_sub(1).max(1) as f64;
        let y_max = nice_ceiling(self.top() as f64 * 1.05);
        // Requests and tokens are counts: ticks a whole step apart.
        let x_axis = Ticks::new(0.0, x_max, 12, 1.0).axis(0.0, x_max);
        let y_axis = Ticks::new(0.0, y_max, 10, 1.0).axis(0.0, y_max);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, (FONT, TITLE_SIZE))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(72)
            .build_cartesian_2d(x_axis, y_axis)?;
        chart
            .configure_mesh()
            .x_desc("request")
            .y_desc("context tokens")
            .axis_desc_style((FONT, AXIS_SIZE))
            .label_style((FONT, LABEL_SIZE))
            .draw()?;
        // Stacks: each area runs from 0 to the running sum; drawn top first so lower ones cover it.
        // Opaque, so each visible band is its legend's colour (translucent areas drawn from 0
        // showed every band as a blend of itself and all the bands above it).
        let mut running = vec![0u64; self.requests()];
        let mut tops = Vec::new();
        for (name, values) in &self.stacks {
            for (r, v) in running.iter_mut().zip(values) {
                *r += v;
            }
            tops.push((*name, running.clone()));
        }
        let categories = crate::result::Categories::default().named();
        for (name, top) in tops.iter().rev() {
            let index = categories.iter().position(|(n, _)| n == name).unwrap_or(0);
            let color = CATEGORY_COLORS[index % CATEGORY_COLORS.len()];
            chart
                .draw_series(AreaSeries::new(
                    top.iter().enumerate().map(|(i, v)| (i as f64, *v as f64)),
                    0.0,
                    color.filled(),
                ))?
                .label(format!("{name} ({})", self.stacked_policy))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        for (i, (policy, values)) in self.lines.iter().enumerate() {
            let color = series_color(i);
            chart
                .draw_series(LineSeries::new(
                    values.iter().enumerate().map(|(r, v)| (r as f64, *v as f64)),
                    color.stroke_width(2),
                ))?
                .label(policy.as_str())
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 12, y)], color.stroke_width(2)));
        }
        // Off the scale, the window is only named in the legend (an empty series).
        let (points, label) = if self.window_shown {
            let w = self.window as f64;
            (vec![(0.0, w), (x_max, w)], format!("context window ({})", self.window))
        } else {
            (Vec::new(), format!("context window ({}, above the scale)", self.window))
        };
        chart
            .draw_series(DashedLineSeries::new(points, MARK_DASH.0, MARK_DASH.1, MARK_COLOR.stroke_width(2)))?
            .label(label)
            .legend(super::mark_legend);
        super::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{Categories, RequestRow, RunSummary};

    fn run(policy: &str, rows: &[(Tokens, Tokens)]) -> Run {
        Run {
            summary: RunSummary { policy: policy.into(), ..Default::default() },
            rows: rows
                .iter()
                .enumerate()
                .map(|(i, (user, contents))| RequestRow {
                    request: i,
                    categories: Categories { user: *user, tool_contents: *contents, ..Default::default() },
                    context_tokens: user + contents,
                    ..Default::default()
                })
                .collect(),
        }
    }

    #[test]
    fn stacks_keep_the_non_empty_categories_of_the_first_run_and_lines_every_run() {
        let runs = [
            run("none", &[(10, 0), (10, 50), (10, 90)]),
            run("keep-turns:n=1", &[(10, 0), (10, 50), (10, 40)]),
        ];
        let t = prepare("dir/s.jsonl", "main", &runs, 1000);
        assert_eq!(t.title, "Context per request: s.jsonl (main, 3 requests)");
        assert_eq!(t.stacks, [("user", vec![10, 10, 10]), ("tool_contents", vec![0, 50, 90])]);
        assert_eq!(t.lines[1], ("keep-turns:n=1".to_owned(), vec![10, 60, 50]));
        // Peak 100: a window of 1000 is more than twice it, so it is left to the caption.
        assert!(!t.window_shown);
        assert_eq!(t.top(), 100);
        let t = prepare("s.jsonl", "main", &runs, 150);
        assert!(t.window_shown);
        assert_eq!(t.top(), 150);
    }

    /// How many text elements of `svg` read exactly `text`.
    fn texts(svg: &str, text: &str) -> usize {
        svg.matches(&format!(">\n{text}\n</text>")).count()
    }

    #[test]
    fn every_tick_of_an_axis_has_one_format_and_its_own_label() {
        // Peak 9,800 tokens: the axis runs to 12k, every tick in thousands.
        let runs = [run("none", &[(100, 0), (100, 5000), (100, 9700)])];
        let svg = super::super::svg(&prepare("s.jsonl", "main", &runs, 1_000_000)).unwrap();
        for tick in ["2k", "8k", "10k", "12k"] {
            assert!(super::super::has_text(&svg, tick), "no tick {tick}");
        }
        assert!(!super::super::has_text(&svg, "8000"), "8000 beside 10k");
        // Two requests of one and two tokens: ticks 0, 1, 2 on y and 0, 1 on x, each once.
        let runs = [run("none", &[(1, 0), (1, 1)])];
        let svg = super::super::svg(&prepare("s.jsonl", "main", &runs, 1_000_000)).unwrap();
        assert_eq!([texts(&svg, "0"), texts(&svg, "1"), texts(&svg, "2")], [2, 2, 1]);
    }

    #[test]
    fn the_svg_has_the_title_axes_and_every_series() {
        let runs = [
            run("none", &[(10, 0), (10, 50), (10, 90)]),
            run("keep-turns:n=1", &[(10, 0), (10, 50), (10, 40)]),
        ];
        let svg = super::super::svg(&prepare("s.jsonl", "main", &runs, 150)).unwrap();
        for needle in [
            "Context per request: s.jsonl (main, 3 requests)",
            "request",
            "context tokens",
            "user (none)",
            "tool_contents (none)",
            "keep-turns:n=1",
            "context window (150)",
        ] {
            assert!(super::super::has_text(&svg, needle), "missing {needle}");
        }
        // Each band is drawn opaque, in its legend's colour: user #78909C, tool contents #0288D1.
        for fill in ["fill=\"#78909C\"", "fill=\"#0288D1\""] {
            assert!(svg.contains(&format!("<polygon opacity=\"1\" {fill}")), "no opaque band {fill}");
        }
        assert!(!svg.contains("<polygon opacity=\"0."), "a translucent band blends with those above it");
        // Deterministic bytes.
        assert_eq!(svg, super::super::svg(&prepare("s.jsonl", "main", &runs, 150)).unwrap());
        let png = super::super::png(&prepare("s.jsonl", "main", &runs, 150)).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }
}
