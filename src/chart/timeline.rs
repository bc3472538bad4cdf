//! The budget timeline of one conversation: the context of every request, stacked by category under
//! the first policy (the `none` baseline in a comparison), one line per policy for its total, and
//! the context window as a horizontal line when it is within twice the largest context (otherwise
//! the legend says how much of it the peak uses, "peak 79k of 200k, 40%", so small conversations
//! stay readable), each policy's prune events as triangles on its line and the requests that find
//! the prompt cache cold as ticks on the request axis. The title names the conversation for a
//! reader (a short name, the agent, the model); its full path is the SVG's `<title>` tooltip.

use plotters::coord::Shift;
use plotters::coord::cartesian::Cartesian2d;
use plotters::prelude::*;

use super::{
    AXIS_SIZE, CATEGORY_COLORS, Chart, DrawResult, FONT, LABEL_SIZE, MARK_COLOR, MARK_DASH, Swatch,
    TITLE_SIZE, TickedAxis, Ticks, cold_marker, compact, nice_ceiling, prune_marker, series_color,
    series_dash,
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
    /// What the SVG's tooltip says: the conversation's full path and id, agent and models.
    pub tooltip: String,
    /// Per line, the requests before which its policy changed a tool result (its prune events).
    pub prunes: Vec<Vec<usize>>,
    /// The requests that find the prompt cache cold under the first policy: the first of a
    /// context, and those sent more than the cache's lifetime after the one before.
    pub cold: Vec<usize>,
}

/// Prepares the timeline of one conversation from its runs (one per policy, the first stacked),
/// named by its path, id and the agent whose log it is (the format that read it; empty: the runs'
/// own), with the context `window` and the prompt cache's lifetime `ttl_ms` (`None`: it never
/// expires).
pub fn prepare(
    (trace, conversation, agent): (&str, &str, &str),
    runs: &[Run],
    window: Tokens,
    ttl_ms: Option<i64>,
) -> Timeline {
    let requests = runs.first().map_or(0, |r| r.rows.len());
    let agent = if agent.is_empty() { runs.first().map_or("", |r| r.summary.format.as_str()) } else { agent };
    let models = models(runs.first().map_or(&[][..], |r| &r.rows));
    let model = match models.as_slice() {
        [] => "model not recorded".to_owned(),
        [one] => super::shorten(&short_model(one), 22),
        [one, rest @ ..] => format!("{} +{}", super::shorten(&short_model(one), 18), rest.len()),
    };
    let mut about = Vec::new();
    if !agent.is_empty() {
        about.push(super::shorten(&clean(agent), 18));
    }
    about.push(model);
    about.push(format!("{requests} request{}", if requests == 1 { "" } else { "s" }));
    let title = format!("{} ({})", readable_name(trace, conversation), about.join(", "));
    let tooltip = format!(
        "{trace}, conversation {conversation} ({agent}; {})",
        if models.is_empty() { "model not recorded".to_owned() } else { models.join(", ") }
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
    let prunes = runs
        .iter()
        .map(|r| r.rows.iter().filter(|row| row.changed_results > 0).map(|row| row.request).collect())
        .collect();
    let cold = runs.first().map_or_else(Vec::new, |r| cold_requests(&r.rows, ttl_ms));
    let peak = lines.iter().flat_map(|(_, v)| v.iter().copied()).max().unwrap_or(0);
    let window_shown = window <= peak.saturating_mul(2);
    Timeline { title, stacked_policy, stacks, lines, window, window_shown, tooltip, prunes, cold }
}

/// The requests of `rows` sent to a cold prompt cache, as the cost model counts them
/// ([`crate::analysis::cost`]): the first of a context, or one sent more than `ttl_ms` after the last.
fn cold_requests(rows: &[crate::result::RequestRow], ttl_ms: Option<i64>) -> Vec<usize> {
    rows.iter()
        .filter(|row| {
            let expired = matches!((ttl_ms, row.gap_ms), (Some(ttl), Some(gap)) if gap > ttl);
            row.previous_context_tokens == 0 || expired
        })
        .map(|row| row.request)
        .collect()
}

/// The models `rows` name, in order of first use, each once (cleaned for a caption).
fn models(rows: &[crate::result::RequestRow]) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for model in rows.iter().filter_map(|r| r.model.as_deref()) {
        let model = clean(model);
        if !model.is_empty() && !seen.contains(&model) {
            seen.push(model);
        }
    }
    seen
}

/// A model's name without a trailing release date (`claude-sonnet-4-5-20250929` →
/// `claude-sonnet-4-5`), which the tooltip keeps.
fn short_model(model: &str) -> String {
    match model.rsplit_once('-') {
        Some((name, date)) if date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) => name.to_owned(),
        _ => model.to_owned(),
    }
}

/// `text` with its control characters (which a log may hold) replaced by `?`.
fn clean(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// A conversation's name for a reader: its file's name without its extensions (a UUID, or a long
/// run of hex digits, cut to its first 8), then its conversation id when it is not `main`.
pub fn readable_name(trace: &str, conversation: &str) -> String {
    let path = std::path::Path::new(trace);
    let stem = path.file_stem().or_else(|| path.file_name()).map_or(trace.into(), |n| n.to_string_lossy());
    // `.traj.json` and the like: every extension goes.
    let stem = stem.split_once('.').map_or(&*stem, |(before, _)| before).to_owned();
    let stem = if stem.is_empty() {
        path.file_name().map_or(trace.into(), |n| n.to_string_lossy()).into()
    } else {
        stem
    };
    let mut name = short_id(&clean(&stem), 24);
    if conversation != "main" && conversation != stem {
        name = format!("{name} / {}", short_id(&clean(conversation), 14));
    }
    name
}

/// `id` in at most `max` chars: a UUID or hex id by its first 8, anything else cut at the end.
fn short_id(id: &str, max: usize) -> String {
    let hex = id.len() >= 16 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if hex { id[..8].to_owned() } else { super::shorten(id, max) }
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

    fn tooltip(&self) -> Option<&str> {
        Some(&self.tooltip)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (x_lo, x_hi) = self.x_range();
        let y_max = nice_ceiling(self.top() as f64 * 1.05);
        // Requests and tokens are counts: ticks a whole step apart.
        let x_axis = Ticks::new(x_lo, x_hi, 12, 1.0).axis(x_lo, x_hi);
        let y_axis = Ticks::new(0.0, y_max, 10, 1.0).axis(0.0, y_max);
        // The legend in its own column beside the plot, not over it: with every policy and
        // category named, a legend inside covered a third of the plot and the lines under it.
        // The title spans the plot and the legend: the whole width holds a whole title.
        let root = root.margin(8, 0, 0, 0).titled(&self.title, (FONT, TITLE_SIZE))?;
        let (plot, side) = root.split_horizontally(root.dim_in_pixel().0.saturating_sub(LEGEND_WIDTH));
        let mut chart = ChartBuilder::on(&plot)
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
        self.draw_stacks(&mut chart)?;
        self.draw_lines(&mut chart)?;
        self.draw_marks(&mut chart)?;
        if self.window_shown {
            let w = self.window as f64;
            chart.draw_series(DashedLineSeries::new(
                [(x_lo, w), (x_hi, w)],
                MARK_DASH.0,
                MARK_DASH.1,
                MARK_COLOR.stroke_width(2),
            ))?;
        }
        super::side_legend(&side, 24, &self.legend())
    }
}

/// Pixels kept right of the plot for the legend.
const LEGEND_WIDTH: u32 = 270;

impl Timeline {
    /// The legend, top to bottom: the stacked categories as they lie (top band first), the
    /// policies in order, then the context window, with the share of it the peak uses (said in
    /// words when the window is off the scale).
    fn legend(&self) -> Vec<(String, Swatch)> {
        let categories = crate::result::Categories::default().named();
        let mut entries: Vec<(String, Swatch)> = self
            .stacks
            .iter()
            .rev()
            .map(|(name, _)| {
                let index = categories.iter().position(|(n, _)| n == name).unwrap_or(0);
                let color = CATEGORY_COLORS[index % CATEGORY_COLORS.len()];
                (format!("{name} ({})", self.stacked_policy), Swatch::Band(color))
            })
            .collect();
        let one = self.requests() == 1;
        for (i, (policy, _)) in self.lines.iter().enumerate() {
            let swatch = match (one, i) {
                (true, _) => Swatch::Dot(i),
                (false, 0) => Swatch::Baseline,
                (false, _) => Swatch::Line(i),
            };
            entries.push((policy.clone(), swatch));
        }
        let events: usize = self.prunes.iter().map(Vec::len).sum();
        if let Some(first) = self.prunes.iter().position(|p| !p.is_empty()) {
            entries.push((format!("prune events ({events}), on its line"), Swatch::Prune(first)));
        }
        if !self.cold.is_empty() {
            let n = self.cold.len();
            entries
                .push((format!("cold cache ({n} request{})", if n == 1 { "" } else { "s" }), Swatch::Cold));
        }
        let peak = self.lines.iter().flat_map(|(_, v)| v.iter().copied()).max().unwrap_or(0);
        let share = if self.window == 0 { 0.0 } else { 100.0 * peak as f64 / self.window as f64 };
        let share = if share >= 10.0 { format!("{share:.0}%") } else { format!("{share:.1}%") };
        let place = if self.window_shown { "" } else { ", off scale" };
        entries.push((format!("context window {}{place}", compact(self.window)), Swatch::Reference));
        entries.push((format!("peak {} of {}, {share}", compact(peak), compact(self.window)), Swatch::Text));
        entries
    }

    /// The prune events on their policies' lines, and the cold-cache requests on the request axis.
    fn draw_marks<'a, DB: DrawingBackend + 'a>(&self, chart: &mut Plot<'a, DB>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let single = self.requests() == 1;
        let n = self.lines.len() as f64;
        for (i, ((_, values), prunes)) in self.lines.iter().zip(&self.prunes).enumerate() {
            // A single request's policies are dots side by side ([`Timeline::draw_dots`]).
            let x = |r: usize| if single { COLUMN * (2.0 * (i as f64 + 0.5) / n - 1.0) } else { r as f64 };
            chart.draw_series(
                prunes.iter().filter_map(|&r| Some(prune_marker(i, (x(r), *values.get(r)? as f64)))),
            )?;
        }
        chart.draw_series(
            self.cold.iter().map(|&r| cold_marker((if single { 0.0 } else { r as f64 }, 0.0))),
        )?;
        Ok(())
    }
}

/// The plotting area of a timeline.
type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<TickedAxis, TickedAxis>>;

/// Dash length and gap of the baseline's line, in pixels: shorter than a reference line's
/// ([`MARK_DASH`]), and in the series' black, not the references' red.
const BASELINE_DASH: (u32, u32) = (5, 4);
/// Radius of a policy's dot on a one-request timeline, in pixels.
const DOT: i32 = 5;
/// Half the width of the stacked column of a one-request timeline, in requests.
const COLUMN: f64 = 0.08;

impl Timeline {
    /// The x range: request 0 to the last, or, with a single request, that one in the middle
    /// (from 0 to 0 there would be no width to draw a line in).
    fn x_range(&self) -> (f64, f64) {
        match self.requests() {
            1 => (-0.5, 0.5),
            n => (0.0, n.saturating_sub(1).max(1) as f64),
        }
    }

    /// The stacked categories: each area runs from 0 to the running sum, drawn top first so lower
    /// ones cover it; a single request's are one column.
    fn draw_stacks<'a, DB: DrawingBackend + 'a>(&self, chart: &mut Plot<'a, DB>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
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
            // Opaque, so each visible band is its legend's colour (translucent areas drawn from 0
            // showed every band as a blend of itself and all the bands above it).
            let color = CATEGORY_COLORS[index % CATEGORY_COLORS.len()];
            if self.requests() == 1 {
                let height = top.first().map_or(0.0, |v| *v as f64);
                chart.draw_series([Rectangle::new([(-COLUMN, 0.0), (COLUMN, height)], color.filled())])?;
            } else {
                chart.draw_series(AreaSeries::new(points(top), 0.0, color.filled()))?;
            }
        }
        Ok(())
    }

    /// One line per policy. The first, the baseline, is dashed and drawn last: drawn first and
    /// solid, every policy that keeps the same context hid it (and, in a stretch where they all
    /// agree, the legend named a line nobody could see); the legend ([`Timeline::legend`]) still
    /// names it first. A single request has no line to draw: each policy
    /// is a dot, side by side across the column, since at the first request they mostly agree.
    fn draw_lines<'a, DB: DrawingBackend + 'a>(&self, chart: &mut Plot<'a, DB>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if self.requests() == 1 {
            return self.draw_dots(chart);
        }
        let Some(((_, base_values), others)) = self.lines.split_first() else { return Ok(()) };
        let black = series_color(0).stroke_width(2);
        for (i, (_, values)) in others.iter().enumerate() {
            let style = series_color(i + 1).stroke_width(2);
            match series_dash(i + 1) {
                None => chart.draw_series(LineSeries::new(points(values), style))?,
                Some((dash, gap)) => {
                    chart.draw_series(DashedLineSeries::new(points(values), dash, gap, style))?
                }
            };
        }
        let (dash, gap) = BASELINE_DASH;
        chart.draw_series(DashedLineSeries::new(points(base_values), dash, gap, black))?;
        Ok(())
    }

    /// The one request's context under each policy, a dot each, spread across the column.
    fn draw_dots<'a, DB: DrawingBackend + 'a>(&self, chart: &mut Plot<'a, DB>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let n = self.lines.len() as f64;
        for (i, (_, values)) in self.lines.iter().enumerate() {
            let color = series_color(i);
            let x = COLUMN * (2.0 * (i as f64 + 0.5) / n - 1.0);
            chart.draw_series(values.iter().map(|v| Circle::new((x, *v as f64), DOT, color.filled())))?;
        }
        Ok(())
    }
}

/// A run of values as `(request, tokens)` points.
fn points(values: &[Tokens]) -> impl Iterator<Item = (f64, f64)> + Clone + '_ {
    values.iter().enumerate().map(|(r, v)| (r as f64, *v as f64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Category;
    use crate::result::{Categories, RequestRow, RunSummary};

    /// A colour as plotters writes it in an SVG attribute.
    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    /// A Claude Code run, its requests a second apart; only the first finds the cache cold.
    fn run(policy: &str, rows: &[(Tokens, Tokens)]) -> Run {
        Run {
            summary: RunSummary { policy: policy.into(), format: "claude-code".into(), ..Default::default() },
            rows: rows
                .iter()
                .enumerate()
                .map(|(i, (user, contents))| RequestRow {
                    request: i,
                    categories: Categories { user: *user, tool_contents: *contents, ..Default::default() },
                    context_tokens: user + contents,
                    previous_context_tokens: if i == 0 { 0 } else { rows[i - 1].0 + rows[i - 1].1 },
                    gap_ms: (i > 0).then_some(1000),
                    model: Some("claude-sonnet-4-5-20250929".into()),
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
        let t = prepare(("dir/s.jsonl", "main", ""), &runs, 1000, None);
        assert_eq!(t.title, "s (claude-code, claude-sonnet-4-5, 3 requests)");
        assert_eq!(t.stacks, [("user", vec![10, 10, 10]), ("tool_contents", vec![0, 50, 90])]);
        assert_eq!(t.lines[1], ("keep-turns:n=1".to_owned(), vec![10, 60, 50]));
        // Peak 100: a window of 1000 is more than twice it, so it is left to the caption.
        assert!(!t.window_shown);
        assert_eq!(t.top(), 100);
        let t = prepare(("s.jsonl", "main", ""), &runs, 150, None);
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
        let svg = super::super::svg(&prepare(("s.jsonl", "main", ""), &runs, 1_000_000, None)).unwrap();
        for tick in ["2k", "8k", "10k", "12k"] {
            assert!(super::super::has_text(&svg, tick), "no tick {tick}");
        }
        assert!(!super::super::has_text(&svg, "8000"), "8000 beside 10k");
        // Two requests of one and two tokens: ticks 0, 1, 2 on y and 0, 1 on x, each once.
        let runs = [run("none", &[(1, 0), (1, 1)])];
        let svg = super::super::svg(&prepare(("s.jsonl", "main", ""), &runs, 1_000_000, None)).unwrap();
        assert_eq!([texts(&svg, "0"), texts(&svg, "1"), texts(&svg, "2")], [2, 2, 1]);
    }

    #[test]
    fn the_baseline_is_dashed_and_drawn_over_the_policies_that_keep_its_context() {
        // keep-turns keeps the whole context until the last request: solid and drawn last, it
        // would cover none's line there.
        let runs = [
            run("none", &[(10, 0), (10, 50), (10, 90)]),
            run("keep-turns:n=1", &[(10, 0), (10, 50), (10, 40)]),
        ];
        let svg = super::super::svg(&prepare(("s.jsonl", "main", ""), &runs, 1_000_000, None)).unwrap();
        let (black, orange) =
            (format!("stroke=\"{}\"", hex(series_color(0))), format!("stroke=\"{}\"", hex(series_color(1))));
        let first = |stroke: &str| svg.find(stroke).unwrap_or_else(|| panic!("no {stroke}"));
        assert!(first(&orange) < first(&black), "none drawn before keep-turns:n=1");
        // Dashed: many short pieces, and two dashes in the legend.
        assert!(svg.matches(&black).count() > 10, "none is not dashed");
        // The legend still names none first.
        assert!(svg.find(">\nnone\n<").unwrap() < svg.find(">\nkeep-turns:n=1\n<").unwrap());
    }

    #[test]
    fn a_single_request_is_drawn_as_a_dot_per_policy_beside_a_column() {
        let runs = [run("none", &[(10, 90)]), run("keep-turns:n=1", &[(10, 90)])];
        let t = prepare(("s.jsonl", "main", ""), &runs, 1_000_000, None);
        assert_eq!(t.title, "s (claude-code, claude-sonnet-4-5, 1 request)");
        assert_eq!(t.x_range(), (-0.5, 0.5));
        let svg = super::super::svg(&t).unwrap();
        // A dot per policy, side by side though both kept the same 100 tokens (and one more each
        // in the legend).
        let circles = |fill: &str| -> Vec<String> {
            svg.split("<circle").skip(1).filter(|c| c.contains(fill)).map(|c| c[..20].to_owned()).collect()
        };
        let (black, orange) = (
            circles(&format!("fill=\"{}\"", hex(series_color(0)))),
            circles(&format!("fill=\"{}\"", hex(series_color(1)))),
        );
        assert_eq!([black.len(), orange.len()], [2, 2], "{black:?} {orange:?}");
        assert_ne!(black[0], orange[0], "dots drawn over each other");
        // The stacked categories are a column in their colours (user, tool contents).
        for category in [Category::User, Category::ToolContents] {
            let fill = format!("fill=\"{}\"", hex(CATEGORY_COLORS[category as usize]));
            assert!(svg.matches(&fill).count() >= 2, "no band {fill} beside its legend entry");
        }
        // The only request is labelled 0, alone on its axis.
        assert!(super::super::has_text(&svg, "0"));
        assert!(!super::super::has_text(&svg, "1") && !super::super::has_text(&svg, "-1"));
    }

    #[test]
    fn the_svg_has_the_title_axes_and_every_series() {
        let runs = [
            run("none", &[(10, 0), (10, 50), (10, 90)]),
            run("keep-turns:n=1", &[(10, 0), (10, 50), (10, 40)]),
        ];
        let svg = super::super::svg(&prepare(("s.jsonl", "main", ""), &runs, 150, None)).unwrap();
        for needle in [
            "s (claude-code, claude-sonnet-4-5, 3 requests)",
            "request",
            "context tokens",
            "user (none)",
            "tool_contents (none)",
            "keep-turns:n=1",
            "context window 150",
        ] {
            assert!(super::super::has_text(&svg, needle), "missing {needle}");
        }
        // Each band is drawn opaque, in its legend's colour (user, tool contents).
        for category in [Category::User, Category::ToolContents] {
            let fill = format!("fill=\"{}\"", hex(CATEGORY_COLORS[category as usize]));
            assert!(svg.contains(&format!("<polygon opacity=\"1\" {fill}")), "no opaque band {fill}");
        }
        assert!(!svg.contains("<polygon opacity=\"0."), "a translucent band blends with those above it");
        // Deterministic bytes.
        assert_eq!(svg, super::super::svg(&prepare(("s.jsonl", "main", ""), &runs, 150, None)).unwrap());
        let png = super::super::png(&prepare(("s.jsonl", "main", ""), &runs, 150, None)).unwrap();
        assert_eq!(&png[1..4], b"PNG");
    }

    #[test]
    fn the_legend_stands_beside_the_plot_and_says_how_much_of_the_window_the_peak_uses() {
        let runs = [
            run("none", &[(10, 0), (10, 50), (10, 90)]),
            run("keep-turns:n=1", &[(10, 0), (10, 50), (10, 40)]),
        ];
        let t = prepare(("s.jsonl", "main", ""), &runs, 200_000, None);
        let legend: Vec<String> = t.legend().into_iter().map(|(label, _)| label).collect();
        assert_eq!(
            legend,
            [
                "tool_contents (none)",
                "user (none)",
                "none",
                "keep-turns:n=1",
                "cold cache (1 request)",
                "context window 200k, off scale",
                "peak 100 of 200k, 0.1%"
            ]
        );
        let svg = super::super::svg(&t).unwrap();
        // Every legend label starts right of the plot, in the column kept for it.
        let plot_right = (super::super::WIDTH - LEGEND_WIDTH) as f64;
        for label in &legend {
            let at = svg.find(&format!(">\n{label}\n</text>")).unwrap_or_else(|| panic!("no {label}"));
            let tag = &svg[svg[..at].rfind("<text").unwrap()..at];
            let x: f64 = tag.split("x=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
            assert!(x > plot_right, "{label} at x = {x}, inside the plot");
        }
        // Within twice the peak, the window is drawn and its share said without "off the scale".
        let near = prepare(("s.jsonl", "main", ""), &runs, 150, None);
        let labels: Vec<String> = near.legend().into_iter().rev().take(2).map(|(label, _)| label).collect();
        assert_eq!(labels, ["peak 100 of 150, 67%", "context window 150"]);
    }

    #[test]
    fn prune_events_sit_on_their_policys_line_and_cold_requests_on_the_axis() {
        let mut pruned = run("keep-turns:n=1", &[(10, 0), (10, 50), (10, 40)]);
        pruned.rows[2].changed_results = 1;
        let runs = [run("none", &[(10, 0), (10, 50), (10, 90)]), pruned];
        let t = prepare(("s.jsonl", "main", ""), &runs, 200_000, None);
        assert_eq!(t.prunes, [vec![], vec![2]]);
        // Requests a second apart: only the first is cold, unless the cache lives half a second.
        assert_eq!(t.cold, [0]);
        assert_eq!(prepare(("s.jsonl", "main", ""), &runs, 200_000, Some(500)).cold, [0, 1, 2]);
        assert_eq!(prepare(("s.jsonl", "main", ""), &runs, 200_000, Some(1000)).cold, [0]);
        let legend: Vec<String> = t.legend().into_iter().map(|(label, _)| label).collect();
        assert!(legend.contains(&"prune events (1), on its line".to_owned()), "{legend:?}");
        // The event's triangle, in keep-turns' colour, on the plot and in the legend; none has none.
        let svg = super::super::svg(&t).unwrap();
        let triangles =
            |c: RGBColor| svg.matches(&format!("<polygon opacity=\"1\" fill=\"{}\"", hex(c))).count();
        assert_eq!(triangles(series_color(1)), 2, "one event and its legend entry");
        let without =
            super::super::svg(&prepare(("s.jsonl", "main", ""), &runs[..1], 200_000, None)).unwrap();
        assert!(!without.contains("prune events"));
    }

    #[test]
    fn the_title_names_the_conversation_whole_and_the_tooltip_its_full_path() {
        let runs = [run("none", &[(10, 0), (10, 50), (10, 90)])];
        let trace = "corpus/claude-code/d-kimuson/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl";
        let t = prepare((trace, "agent-a485154c-subagent-of-main", ""), &runs, 200_000, None);
        assert_eq!(t.title, "1af7fc5e / agent-a485154… (claude-code, claude-sonnet-4-5, 3 requests)");
        // The whole title fits the chart's width at the title size: nothing cut at the edge.
        super::super::fonts().unwrap();
        let (width, _) = (FONT, TITLE_SIZE).into_font().box_size(&t.title).unwrap();
        assert!(width + 16 < super::super::WIDTH, "title {width} px wide");
        let svg = super::super::svg(&t).unwrap();
        assert!(super::super::has_text(&svg, &t.title));
        assert!(svg.contains(&format!(
            "<title>{trace}, conversation agent-a485154c-subagent-of-main (claude-code; claude-sonnet-4-5-20250929)</title>"
        )));
        // A hostile path is escaped in the tooltip, its control characters replaced.
        let t = prepare(("x/<b>&\"q\"\u{1b}[31m.jsonl", "main", ""), &runs, 200_000, None);
        let svg = super::super::svg(&t).unwrap();
        assert!(
            svg.contains("<title>x/&lt;b&gt;&amp;&quot;q&quot;\u{FFFD}[31m.jsonl, conversation main"),
            "{}",
            &svg[..400]
        );
        assert!(!svg.contains('\u{1b}'));
        assert_eq!(readable_name("a/session-624a4a58.jsonl", "main"), "session-624a4a58");
        assert_eq!(readable_name("traces/build-and-test.jsonl", "main"), "build-and-test");
        assert_eq!(readable_name("d/django__django-11149.traj.json", "main"), "django__django-11149");
        assert_eq!(short_model("gpt-4o"), "gpt-4o");
    }
}
