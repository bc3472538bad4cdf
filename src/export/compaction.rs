//! The compaction columns of the table-like outputs (terminal table, Markdown, CSV) of `replay`,
//! `compare`, `cost` and `recommend`: per run, the compactions made, the tokens summarised away,
//! the summaries' tokens and the summarisation calls' input and output (docs/compaction.md). The
//! JSON of every command carries them always; a table carries them when any of its runs
//! compacted, so the tables of runs that never compact keep their shape. Builds cells only: no
//! I/O.

use super::columns::Tabular;
use crate::analysis::compare::CompactionEventRow;
use crate::analysis::summarization::CompactionTotals;
use crate::result::RunSummary;

/// The columns, in order (the JSON field names).
pub const COMPACTION_HEADERS: [&str; 5] = [
    "compactions",
    "summarized_tokens",
    "summary_tokens",
    "summarization_input_tokens",
    "summarization_output_tokens",
];

/// The columns of [`runs`].
pub const RUNS_HEADERS: [&str; 8] = [
    "trace",
    "conversation",
    "policy",
    "compactions",
    "summarized_tokens",
    "summary_tokens",
    "summarization_input_tokens",
    "summarization_output_tokens",
];

/// `headers` without the compaction columns [`append`] added at their end (as they are when it
/// added none).
pub fn without<'a, 'b>(headers: &'a [&'b str]) -> &'a [&'b str] {
    match headers.len().checked_sub(COMPACTION_HEADERS.len()) {
        Some(n) if headers[n..] == COMPACTION_HEADERS => &headers[..n],
        _ => headers,
    }
}

/// The compaction columns a fitted table keeps beside its view's (`own` columns): the count and
/// the summaries' tokens, after the first column kept (the policy), when [`append`] added them.
pub fn keep_beside(headers: &[&str], own: usize, source: &mut Vec<usize>) {
    if headers.len() != own + COMPACTION_HEADERS.len() || without(headers).len() != own {
        return;
    }
    let at = source.len().min(1);
    source.insert(at, own + 2);
    source.insert(at, own);
}

/// The title of `cost`'s table of [`events`].
pub const EVENTS_TITLE: &str = "Compactions: each summarisation call, billed";

/// One row per summarisation call (`cost`'s terminal and Markdown tables; the JSON of `compare`
/// and `cost` lists them as `compaction_events`), its cost in `unit`.
pub fn events(events: &[CompactionEventRow], unit: &str) -> Tabular {
    let headers = vec![
        "trace",
        "conversation",
        "policy",
        "request",
        "input_tokens",
        "read_tokens",
        "output_tokens",
        "cost",
        "cost_usd",
    ];
    let rows = events
        .iter()
        .map(|e| {
            let v = &e.event;
            vec![
                e.trace.clone(),
                e.conversation.clone(),
                e.policy.clone(),
                v.request.to_string(),
                v.input_tokens.to_string(),
                v.read_tokens.to_string(),
                v.output_tokens.to_string(),
                super::analysis::money(v.cost, unit),
                format!("{:.4}", v.cost_usd),
            ]
        })
        .collect();
    Tabular { headers, rows }
}

/// The cells of one run's compactions, in [`COMPACTION_HEADERS`] order.
pub fn cells(c: &CompactionTotals) -> [String; 5] {
    [
        c.compactions.to_string(),
        c.summarized_tokens.to_string(),
        c.summary_tokens.to_string(),
        c.summarization_input_tokens.to_string(),
        c.summarization_output_tokens.to_string(),
    ]
}

/// `t` with the compaction columns appended, one `totals` per row, when any row compacted;
/// unchanged otherwise.
pub fn append(mut t: Tabular, totals: &[CompactionTotals]) -> Tabular {
    if totals.iter().all(|c| c.compactions == 0) {
        return t;
    }
    t.headers.extend(COMPACTION_HEADERS);
    for (row, c) in t.rows.iter_mut().zip(totals) {
        row.extend(cells(c));
    }
    t
}

/// The table of the runs that compacted (trace, conversation, policy, then the compaction
/// columns), or `None` when none did: what the terminal and Markdown replay tables add under
/// their totals.
pub fn runs(runs: &[RunSummary]) -> Option<Tabular> {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .filter(|r| r.compaction.compactions > 0)
        .map(|r| {
            let mut row = vec![r.trace.clone(), r.conversation.clone(), r.policy.clone()];
            row.extend(cells(&r.compaction));
            row
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Tabular { headers: RUNS_HEADERS.to_vec(), rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tabular() -> Tabular {
        Tabular { headers: vec!["policy"], rows: vec![vec!["a".into()], vec!["b".into()]] }
    }

    #[test]
    fn columns_are_appended_only_when_a_row_compacted() {
        let none = [CompactionTotals::default(); 2];
        assert_eq!(append(tabular(), &none), tabular());
        let one = CompactionTotals {
            compactions: 1,
            summarized_tokens: 100,
            summary_tokens: 3,
            ..Default::default()
        };
        let t = append(tabular(), &[CompactionTotals::default(), one]);
        assert_eq!(t.headers.len(), 6);
        assert_eq!(t.rows[0][1..], ["0", "0", "0", "0", "0"]);
        assert_eq!(t.rows[1][1..], ["1", "100", "3", "0", "0"]);
        assert_eq!(without(&t.headers), ["policy"]);
        assert_eq!(without(&tabular().headers), ["policy"]);
    }

    #[test]
    fn a_fitted_table_keeps_the_count_and_the_summaries_after_its_first_column() {
        let mut headers = vec!["policy", "cost"];
        headers.extend(COMPACTION_HEADERS);
        let mut source = vec![0, 1];
        keep_beside(&headers, 2, &mut source);
        assert_eq!(source, [0, 2, 4, 1]);
        let mut plain = vec![0, 1];
        keep_beside(&["policy", "cost"], 2, &mut plain);
        assert_eq!(plain, [0, 1]);
    }

    #[test]
    fn the_runs_table_lists_only_runs_that_compacted() {
        let quiet = RunSummary { policy: "none".into(), ..Default::default() };
        assert!(runs(std::slice::from_ref(&quiet)).is_none());
        let loud = RunSummary {
            policy: "compact:codex".into(),
            compaction: CompactionTotals { compactions: 2, summary_tokens: 9, ..Default::default() },
            ..Default::default()
        };
        let t = runs(&[quiet, loud]).unwrap();
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0][2], "compact:codex");
        assert_eq!(t.rows[0][3..6], ["2", "0", "9"]);
    }
}
