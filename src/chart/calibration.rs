//! The estimate-versus-real chart: for the tools with the most output tokens, the real tokens beside
//! each estimator's estimate, so under- and over-counting per tool is visible at a glance.

use super::{BarChart, OrPlaceholder};
use crate::analysis::calibration::Calibration;

/// How many tools the chart shows.
pub const TOOLS: usize = 10;

/// The chart of a calibration, or a placeholder when there is no tool result to calibrate or no
/// real count to calibrate against: under `--tokenizer estimate` the "real" tokens are len/4
/// itself, so the chart would set len/4 against len/4.
pub fn prepare_or_placeholder(c: &Calibration) -> OrPlaceholder<BarChart> {
    let tools = c.rows.iter().any(|r| r.group == "tool");
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
    OrPlaceholder::unless(reason, || "Estimate versus real tokens per tool".to_owned(), || prepare(c))
}

/// Prepares the chart from a calibration: the first [`TOOLS`] tools of the first estimator (the
/// calibration lists them most tokens first), and a title that says so when there are more.
pub fn prepare(c: &Calibration) -> BarChart {
    let all: Vec<&str> = match c.rows.first() {
        Some(first) => c
            .rows
            .iter()
            .filter(|r| r.estimator == first.estimator && r.group == "tool")
            .map(|r| r.key.as_str())
            .collect(),
        None => Vec::new(),
    };
    let tools: Vec<String> = all.iter().take(TOOLS).map(|t| t.to_string()).collect();
    let which = if all.len() > TOOLS {
        format!("of the {TOOLS} tools with the most tokens")
    } else {
        "per tool".to_owned()
    };
    let mut estimators: Vec<&str> = Vec::new();
    for r in &c.rows {
        if !estimators.contains(&r.estimator.as_str()) {
            estimators.push(&r.estimator);
        }
    }
    let value = |estimator: &str, tool: &str, real: bool| {
        c.rows
            .iter()
            .find(|r| r.estimator == estimator && r.group == "tool" && r.key == tool)
            .map_or(0.0, |r| if real { r.tokens as f64 } else { r.estimate })
    };
    let mut series = Vec::new();
    if let Some(first) = estimators.first() {
        series
            .push((format!("real ({})", c.tokenizer), tools.iter().map(|t| value(first, t, true)).collect()));
    }
    for e in &estimators {
        series.push((format!("estimate {e}"), tools.iter().map(|t| value(e, t, false)).collect()));
    }
    BarChart {
        title: format!("Estimate versus real tokens {which} ({})", c.tokenizer),
        y_desc: "tokens (all outputs of the tool)".into(),
        x_desc: "tool".into(),
        categories: tools,
        series,
        reference: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::calibration::CalibrationRow;
    use crate::chart::Chart;

    fn calibration() -> Calibration {
        let row = |group: &str, key: &str, tokens, estimate| CalibrationRow {
            estimator: "len/4".into(),
            group: group.into(),
            key: key.into(),
            tokens,
            estimate,
            ..Default::default()
        };
        Calibration {
            tokenizer: "o200k".into(),
            rows: vec![
                row("all", "all", 300, 250.0),
                row("tool", "Read", 200, 180.0),
                row("tool", "Bash", 100, 70.0),
                row("kind", "code", 300, 250.0),
            ],
            provider_scaled: false,
        }
    }

    #[test]
    fn real_and_estimated_tokens_per_tool() {
        let c = prepare(&calibration());
        assert_eq!(c.categories, ["Read", "Bash"]);
        assert_eq!(
            c.series,
            [
                ("real (o200k)".to_owned(), vec![200.0, 100.0]),
                ("estimate len/4".to_owned(), vec![180.0, 70.0])
            ]
        );
    }

    #[test]
    fn with_no_tool_results_a_placeholder_says_there_is_nothing_to_calibrate() {
        assert_eq!(prepare_or_placeholder(&calibration()), OrPlaceholder::Chart(prepare(&calibration())));
        let empty = Calibration { tokenizer: "o200k".into(), rows: Vec::new(), provider_scaled: false };
        let c = prepare_or_placeholder(&empty);
        assert_eq!(c.not_drawn(), Some("the inputs hold no tool results to calibrate"));
        let svg = super::super::svg(&c).unwrap();
        assert!(super::super::has_text(&svg, "Estimate versus real tokens per tool"));
        assert!(super::super::has_text(&svg, "Not drawn: the inputs hold no tool results to calibrate."));
    }

    #[test]
    fn under_the_estimate_tokenizer_a_placeholder_says_there_are_no_real_tokens() {
        let estimated = Calibration { tokenizer: "estimate".into(), ..calibration() };
        let c = prepare_or_placeholder(&estimated);
        let reason = "with --tokenizer estimate there are no real tokens to set the estimates against \
                      (--tokenizer o200k or cl100k counts them)";
        assert_eq!(c.not_drawn(), Some(reason));
        assert_eq!(c.title(), "Estimate versus real tokens per tool");
        let svg = super::super::svg(&c).unwrap();
        assert!(!super::super::has_text(&svg, "real (estimate)"), "len/4 drawn as the real tokens");
    }

    #[test]
    fn a_chart_cut_to_the_tools_with_the_most_tokens_says_so_in_its_title() {
        assert_eq!(prepare(&calibration()).title, "Estimate versus real tokens per tool (o200k)");
        let mut many = calibration();
        for i in 0..TOOLS {
            let row = CalibrationRow {
                estimator: "len/4".into(),
                group: "tool".into(),
                key: format!("tool{i}"),
                tokens: 50 - i as u64,
                ..Default::default()
            };
            many.rows.insert(3 + i, row);
        }
        let c = prepare(&many);
        assert_eq!(c.categories.len(), TOOLS);
        assert_eq!(c.title, "Estimate versus real tokens of the 10 tools with the most tokens (o200k)");
    }

    #[test]
    fn the_svg_has_the_title_axes_series_and_tools() {
        let svg = super::super::svg(&prepare(&calibration())).unwrap();
        for needle in [
            "Estimate versus real tokens per tool (o200k)",
            "tokens (all outputs of the tool)",
            "tool",
            "real (o200k)",
            "estimate len/4",
            "Read",
            "Bash",
        ] {
            assert!(super::super::has_text(&svg, needle), "missing {needle}");
        }
    }
}
