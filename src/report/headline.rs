//! The top of the report page, what a reader sees first: the recommendation in one sentence with
//! its numbers beside the sessions as recorded, then what was analysed (conversations, requests,
//! files, the agents' log formats, the models the logs name, the dates of their requests, how closely
//! the replay reproduces what was billed). Built from the finished analyses; nothing here touches
//! files. Names from the logs are written as they are: the page's template escapes them.

use std::collections::BTreeMap;

use super::headers::{self, Kind};
use super::page::{Cell, Header, Headline, Prose, Row, Table};
use super::{ReportInput, Seen};
use crate::analysis::recommend::{Candidate, Recommendation};
use crate::chart::thousands;
use crate::export::analysis::pct;

/// The top of the page.
pub(crate) fn headline(input: &ReportInput<'_>, seen: &Seen) -> Headline {
    Headline {
        sentence: Prose::new(&input.recommendation.sentence),
        numbers: numbers(input.recommendation),
        analysed: analysed(input, seen),
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
fn analysed(input: &ReportInput<'_>, seen: &Seen) -> Vec<Prose> {
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
    lines.extend(models(seen));
    lines.push(dates(seen));
    lines.extend(super::fidelity(input));
    lines.iter().map(|l| Prose::new(l)).collect()
}

/// Models listed by name at most; the rest are counted.
const MODELS_LISTED: usize = 8;

/// The models the conversations name, most conversations first, and how many name none.
fn models(seen: &Seen) -> Option<String> {
    if seen.conversations == 0 {
        return None;
    }
    let mut models: Vec<(&String, &usize)> = seen.models.iter().collect();
    models.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    // A backtick from a log would start a code span ([`Prose`]).
    let mut listed: Vec<String> = models
        .iter()
        .take(MODELS_LISTED)
        .map(|(name, n)| format!("{} {}", name.replace('`', "'"), thousands(**n as u64)))
        .collect();
    if models.len() > MODELS_LISTED {
        listed.push(format!("{} more", models.len() - MODELS_LISTED));
    }
    let none = match seen.without_model {
        0 => String::new(),
        n if n == seen.conversations => return Some("Models: none named in the logs.".into()),
        n => format!("; {} name none", thousands(n as u64)),
    };
    Some(format!("Conversations per model: {}{none}.", listed.join(", ")))
}

/// When the requests were sent, from the logs' timestamps: a day, or the first and last day (UTC).
fn dates(seen: &Seen) -> String {
    let Some((first, last)) = &seen.span else { return "Dates: no timestamps in the logs.".into() };
    let day = |t: &str| t.get(..10).unwrap_or(t).to_owned();
    let (first, last) = (day(first), day(last));
    let when = if first == last { format!("on {first}") } else { format!("from {first} to {last}") };
    let missing = match seen.without_time {
        0 => String::new(),
        n => format!(
            "; {} of {} conversations have none",
            thousands(n as u64),
            thousands(seen.conversations as u64)
        ),
    };
    format!("Requests sent {when} (UTC, from the logs' timestamps{missing}).")
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

    fn row(model: Option<&str>, timestamp: Option<&str>) -> crate::result::RequestRow {
        crate::result::RequestRow {
            model: model.map(Into::into),
            timestamp: timestamp.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn what_was_analysed_names_the_models_and_the_dates_of_the_requests() {
        let mut seen = Seen::default();
        assert_eq!(models(&seen), None);
        assert_eq!(dates(&seen), "Dates: no timestamps in the logs.");
        seen.note(&[row(None, None)]);
        assert_eq!(models(&seen).unwrap(), "Models: none named in the logs.");
        assert_eq!(dates(&seen), "Dates: no timestamps in the logs.");
        seen.note(&[
            row(Some("gpt-4o"), Some("2026-05-11T10:00:00.000Z")),
            row(Some("gpt-`5`"), Some("2026-05-12T23:59:59.999Z")),
        ]);
        seen.note(&[row(Some("gpt-4o"), Some("2025-10-13T08:00:00.000Z")), row(Some("gpt-4o"), None)]);
        assert_eq!(models(&seen).unwrap(), "Conversations per model: gpt-4o 2, gpt-'5' 1; 1 name none.");
        assert_eq!(
            dates(&seen),
            "Requests sent from 2025-10-13 to 2026-05-12 (UTC, from the logs' timestamps; 1 of 3 conversations have none)."
        );
        // The same whatever order the conversations are noted in.
        let mut other = Seen::default();
        other.note(&[row(Some("gpt-4o"), Some("2025-10-13T08:00:00.000Z")), row(Some("gpt-4o"), None)]);
        other.note(&[
            row(Some("gpt-`5`"), Some("2026-05-12T23:59:59.999Z")),
            row(Some("gpt-4o"), Some("2026-05-11T10:00:00.000Z")),
        ]);
        other.note(&[row(None, None)]);
        assert_eq!(other, seen);
        let mut one_day = Seen::default();
        one_day.note(&[
            row(None, Some("2026-05-11T10:00:00.000Z")),
            row(None, Some("2026-05-11T11:00:00.000Z")),
        ]);
        assert_eq!(dates(&one_day), "Requests sent on 2026-05-11 (UTC, from the logs' timestamps).");
    }
}
