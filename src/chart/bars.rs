//! Grouped bar charts and their category labels: each label shortened to its slot, and labels that
//! would shorten alike told apart by moving the cut before widening. Drawing returns `Result`.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{Ticks, nice_ceiling};
use super::{
    AXIS_SIZE, Chart, DrawResult, FONT, LABEL_GAP, LABEL_SIZE, MARK_COLOR, MARK_DASH, MAX_LABEL_CHARS,
    MIN_LABEL_CHARS, TITLE_SIZE, legend, mark_legend, series_color,
};

/// `text` cut to `max` chars with a trailing `…`.
pub fn shorten(text: &str, max: usize) -> String {
    cut(text, max, max.saturating_sub(1))
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
/// overrun (`distinct_cut`). Only when no cut at that width tells them apart are they lengthened,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::svg;

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
}
