//! The policy comparison chart: total input tokens and cache-aware cost of each policy, as a
//! percentage of the sessions as recorded (`none`, nothing split), side by side, so a policy that saves tokens but costs more stands out (its
//! cost bar is above its token bar, possibly above 100%).

use super::{BarChart, OrPlaceholder};
use crate::analysis::compare::Comparison;

/// The chart of a comparison, or a placeholder when no request was replayed: every policy would
/// be drawn at 100% of a `none` of nothing.
pub fn prepare_or_placeholder(c: &Comparison) -> OrPlaceholder<BarChart> {
    let replayed = c.replayed_any();
    OrPlaceholder::unless(
        (!replayed).then(|| "nothing was replayed, the inputs hold no requests".to_owned()),
        || title(c),
        || prepare(c),
    )
}

fn title(c: &Comparison) -> String {
    format!(
        "Input tokens and cost per policy, % of the sessions as recorded (threshold {}, prices {}, cache TTL {})",
        c.threshold,
        c.cache.prices.name,
        crate::analysis::cost::format_ttl(c.cache.ttl_ms)
    )
}

/// Prepares the chart from a comparison: input tokens, then cost, as percentages of the sessions as recorded.
pub fn prepare(c: &Comparison) -> BarChart {
    let percent = |change: f64| (1.0 + change) * 100.0;
    BarChart {
        title: title(c),
        y_desc: "% of as recorded".into(),
        x_desc: "policy".into(),
        categories: c.policies.iter().map(|p| p.policy.clone()).collect(),
        series: vec![
            ("input tokens".into(), c.policies.iter().map(|p| percent(-p.savings)).collect()),
            ("cost".into(), c.policies.iter().map(|p| percent(p.cost_change)).collect()),
        ],
        reference: Some((100.0, "as recorded = 100%".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::PolicyRow;
    use crate::analysis::cost::CacheModel;
    use crate::chart::Chart;

    fn comparison() -> Comparison {
        let row = |policy: &str, savings, cost_change| PolicyRow {
            policy: policy.into(),
            requests: 4,
            savings,
            cost_change,
            ..Default::default()
        };
        Comparison {
            threshold: 256,
            window: 200_000,
            cache: CacheModel::default(),
            baseline_input_tokens: 0,
            baseline_cost: 0.0,
            baseline_cost_usd: 0.0,
            policies: vec![row("none", 0.0, 0.0), row("keep-results:n=5", 0.5, 0.12)],
            events: Vec::new(),
            compaction_events: Vec::new(),
            conversations: Vec::new(),
        }
    }

    #[test]
    fn bars_are_percentages_of_none() {
        let c = prepare(&comparison());
        assert_eq!(c.categories, ["none", "keep-results:n=5"]);
        assert_eq!(c.series[0], ("input tokens".to_owned(), vec![100.0, 50.0]));
        assert_eq!(c.series[1].0, "cost");
        assert!((c.series[1].1[1] - 112.0).abs() < 1e-9);
        assert!(c.title.contains("prices anthropic, cache TTL 5m"), "{}", c.title);
    }

    #[test]
    fn with_nothing_replayed_a_placeholder_says_so_instead_of_bars_at_100_percent() {
        assert_eq!(prepare_or_placeholder(&comparison()), OrPlaceholder::Chart(prepare(&comparison())));
        let mut empty = comparison();
        for p in &mut empty.policies {
            p.requests = 0;
        }
        let c = prepare_or_placeholder(&empty);
        assert_eq!(c.title(), prepare(&empty).title);
        assert_eq!(c.not_drawn(), Some("nothing was replayed, the inputs hold no requests"));
        let svg = super::super::svg(&c).unwrap();
        assert!(super::super::has_text(
            &svg,
            "Not drawn: nothing was replayed, the inputs hold no requests."
        ));
        assert!(!super::super::has_text(&svg, "as recorded = 100%"), "bars drawn");
    }

    #[test]
    fn the_svg_has_the_title_axes_series_and_policies() {
        let svg = super::super::svg(&prepare(&comparison())).unwrap();
        for needle in [
            "Input tokens and cost per policy, % of the sessions as recorded (threshold 256, prices anthropic, cache TTL 5m)",
            "% of as recorded",
            "policy",
            "input tokens",
            "cost",
            "as recorded = 100%",
            "keep-results:n=5",
        ] {
            assert!(super::super::has_text(&svg, needle), "missing {needle}");
        }
    }
}
