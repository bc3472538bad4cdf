//! The top of the report page, what a reader sees first: the recommendation in one sentence with
//! its numbers beside the sessions as recorded, then what was analysed (conversations, requests,
//! files, the agents' log formats, how closely the replay reproduces what was billed). Built from
//! the finished analyses; nothing here touches files.

use std::collections::BTreeMap;

use super::ReportInput;
use super::headers::{self, Kind};
use super::page::{Cell, Header, Headline, Prose, Row, Table};
use crate::analysis::recommend::{Candidate, Recommendation};
use crate::chart::thousands;
use crate::export::analysis::pct;

/// The top of the page.
pub(crate) fn headline(input: &ReportInput<'_>) -> Headline {
    Headline {
        sentence: Prose::new(&input.recommendation.sentence),
        numbers: numbers(input.recommendation),
        analysed: analysed(input),
    }
}

/// The recommended pair beside the sessions as recorded: input tokens, cost, peak, prune events,
/// and the change of each.
fn numbers(r: &Recommendation) -> Option<Table> {
    let rec = r.recommendation.as_ref()?;
    let (pick, base) = (&rec.pick, &rec.baseline);
    let split = pick
        .threshold
        .map_or_else(|| "nothing split".to_owned(), |t| format!("threshold {} bytes", thousands(t as u64)));
    let header = |text: String| Header { text, name: "" };
    let money = |v: f64| headers::cell(&format!("{v:.4}"), Kind::Cost, &r.cost_unit);
    let change = |now: f64, then: f64| if then > 0.0 { pct(now / then - 1.0) } else { String::new() };
    let line = |what: &str, value: &dyn Fn(&Candidate) -> String, changed: String| Row {
        cells: vec![text(what), number(value(base)), number(value(pick)), number(changed)],
        recommended: false,
    };
    let rows = vec![
        line("Input (tokens)", &|c| thousands(c.input_tokens), pct(-pick.savings)),
        line(&format!("Cost ({})", r.cost_unit), &|c| money(c.cost), pct(pick.cost_change)),
        line(
            "Peak context (tokens)",
            &|c| thousands(c.peak_context_tokens),
            change(pick.peak_context_tokens as f64, base.peak_context_tokens as f64),
        ),
        line("Prune events", &|c| thousands(c.prune_events as u64), String::new()),
    ];
    Some(Table {
        headers: vec![
            header(String::new()),
            header("As recorded".into()),
            header(format!("Recommended: {}, {split}", pick.policy)),
            header("Change".into()),
        ],
        rows,
        rest: Vec::new(),
        rest_summary: String::new(),
    })
}

fn text(t: &str) -> Cell {
    Cell { text: t.to_owned(), numeric: false }
}

fn number(t: String) -> Cell {
    Cell { text: t, numeric: true }
}

/// What was analysed, one line each.
fn analysed(input: &ReportInput<'_>) -> Vec<Prose> {
    let r = input.recommendation;
    let read = input.files.iter().filter(|f| f.format.is_some()).count();
    let mut lines = vec![format!(
        "{} conversations, {} requests, from {} of {} files found.",
        thousands(r.conversations as u64),
        thousands(r.requests as u64),
        thousands(read as u64),
        thousands(input.files.len() as u64)
    )];
    let mut formats: BTreeMap<&str, usize> = BTreeMap::new();
    for f in &input.files {
        if let Some(format) = &f.format {
            *formats.entry(format.as_str()).or_default() += f.conversations;
        }
    }
    let mut formats: Vec<(&str, usize)> = formats.into_iter().collect();
    formats.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    if !formats.is_empty() {
        let listed: Vec<String> =
            formats.iter().map(|(name, n)| format!("`{name}` {}", thousands(*n as u64))).collect();
        lines.push(format!("Conversations per agent log format: {}.", listed.join(", ")));
    }
    lines.extend(super::fidelity(input));
    lines.iter().map(|l| Prose::new(l)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::recommend::Recommended;

    fn candidate(policy: &str, threshold: Option<usize>, input_tokens: u64, cost: f64) -> Candidate {
        Candidate {
            policy: policy.into(),
            threshold,
            input_tokens,
            cost,
            peak_context_tokens: input_tokens / 10,
            reuse_share: None,
            savings: 0.0,
            cost_change: 0.0,
            prune_events: 3,
            meets_constraints: true,
            ..Default::default()
        }
    }

    #[test]
    fn the_numbers_set_the_recommendation_beside_the_sessions_as_recorded() {
        let base = candidate("none", None, 2_000_000, 40.0);
        let mut pick = candidate("keep-turns:n=3", Some(32_768), 1_500_000, 30.0);
        pick.savings = 0.25;
        pick.cost_change = -0.25;
        let r = Recommendation {
            conversations: 2,
            requests: 9,
            cost_unit: "USD".into(),
            cache: Default::default(),
            window: 200_000,
            max_reuse: None,
            sentence: String::new(),
            recommendation: Some(Recommended { pick, baseline: base }),
            runners_up: Vec::new(),
            interval: None,
            per_tool: Vec::new(),
            candidates: Vec::new(),
        };
        let t = numbers(&r).expect("a recommendation");
        assert_eq!(t.headers[2].text, "Recommended: keep-turns:n=3, threshold 32,768 bytes");
        let cells: Vec<Vec<&str>> =
            t.rows.iter().map(|row| row.cells.iter().map(|c| c.text.as_str()).collect()).collect();
        assert_eq!(cells[0], ["Input (tokens)", "2,000,000", "1,500,000", "-25.0%"]);
        assert_eq!(cells[1], ["Cost (USD)", "$40.00", "$30.00", "-25.0%"]);
        assert_eq!(cells[2], ["Peak context (tokens)", "200,000", "150,000", "-25.0%"]);
        let none = Recommendation { recommendation: None, ..r };
        assert!(numbers(&none).is_none());
    }
}
