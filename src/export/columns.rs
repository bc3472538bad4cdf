//! Column definitions shared by the table-like exporters (terminal table, Markdown, CSV), so the
//! three always agree on names and order. Headers are the JSON field names.

use rayon::prelude::*;

use crate::result::{PolicyTotals, ReplayReport, RequestRow, RunSummary};

/// A rectangular table of cells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tabular {
    /// Column headers.
    pub headers: Vec<&'static str>,
    /// Rows of cells, each as long as `headers`.
    pub rows: Vec<Vec<String>>,
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// Percentage with one decimal, or empty.
pub fn percent(v: Option<f64>) -> String {
    v.map(|v| format!("{:.1}%", v * 100.0)).unwrap_or_default()
}

/// Every field of every run summary (the CSV shape).
pub fn runs_full(runs: &[RunSummary]) -> Tabular {
    Tabular {
        headers: vec![
            "trace",
            "conversation",
            "format",
            "policy",
            "transforms",
            "threshold",
            "tokenizer",
            "decide_with",
            "requests",
            "tool_results",
            "split_results",
            "tool_output_bytes",
            "tool_output_tokens",
            "content_tokens",
            "content_estimate",
            "peak_context_tokens",
            "total_input_tokens",
            "final_context_tokens",
            "pruned_tokens",
            "prune_events",
            "recorded_input_tokens",
            "recorded_requests",
        ],
        rows: runs
            .iter()
            .map(|r| {
                vec![
                    r.trace.clone(),
                    r.conversation.clone(),
                    r.format.clone(),
                    r.policy.clone(),
                    r.transforms.join(" "),
                    r.threshold.to_string(),
                    r.tokenizer.clone(),
                    r.decide_with.clone(),
                    r.requests.to_string(),
                    r.tool_results.to_string(),
                    r.split_results.to_string(),
                    r.tool_output_bytes.to_string(),
                    r.tool_output_tokens.to_string(),
                    r.content_tokens.to_string(),
                    r.content_estimate.to_string(),
                    r.peak_context_tokens.to_string(),
                    r.total_input_tokens.to_string(),
                    r.final_context_tokens.to_string(),
                    r.pruned_tokens.to_string(),
                    r.prune_events.to_string(),
                    opt(r.recorded_input_tokens),
                    r.recorded_requests.to_string(),
                ]
            })
            .collect(),
    }
}

/// The run summaries a person reads first (the terminal and Markdown shape).
pub fn runs_brief(runs: &[RunSummary]) -> Tabular {
    Tabular {
        headers: vec![
            "trace",
            "conversation",
            "policy",
            "threshold",
            "requests",
            "tool_results",
            "split_results",
            "peak_context_tokens",
            "total_input_tokens",
            "pruned_tokens",
            "prune_events",
            "recorded_input_tokens",
        ],
        rows: runs
            .iter()
            .map(|r| {
                vec![
                    r.trace.clone(),
                    r.conversation.clone(),
                    r.policy.clone(),
                    r.threshold.to_string(),
                    r.requests.to_string(),
                    r.tool_results.to_string(),
                    r.split_results.to_string(),
                    r.peak_context_tokens.to_string(),
                    r.total_input_tokens.to_string(),
                    r.pruned_tokens.to_string(),
                    r.prune_events.to_string(),
                    opt(r.recorded_input_tokens),
                ]
            })
            .collect(),
    }
}

/// Totals per policy and threshold over all conversations.
pub fn totals(report: &ReplayReport) -> Tabular {
    let totals = PolicyTotals::by_policy(&report.runs);
    Tabular {
        headers: vec![
            "policy",
            "threshold",
            "conversations",
            "requests",
            "peak_context_tokens",
            "total_input_tokens",
            "savings",
            "pruned_tokens",
            "prune_events",
        ],
        rows: totals
            .iter()
            .map(|t| {
                vec![
                    t.policy.clone(),
                    t.threshold.to_string(),
                    t.conversations.to_string(),
                    t.requests.to_string(),
                    t.peak_context_tokens.to_string(),
                    t.total_input_tokens.to_string(),
                    percent(t.savings),
                    t.pruned_tokens.to_string(),
                    t.prune_events.to_string(),
                ]
            })
            .collect(),
    }
}

/// One row per request of every run that carries a timeline.
pub fn timeline(runs: &[RunSummary]) -> Tabular {
    let parts: Vec<(&RunSummary, &[RequestRow])> =
        runs.iter().map(|run| (run, run.timeline.as_deref().unwrap_or_default())).collect();
    timeline_of(&parts)
}

/// [`timeline`] of runs whose rows are kept apart from their summaries, rows made in parallel
/// (a report's timeline.csv has every request of every conversation under every policy).
pub fn timeline_of(parts: &[(&RunSummary, &[RequestRow])]) -> Tabular {
    let rows = parts
        .par_iter()
        .flat_map_iter(|&(run, rows)| rows.iter().map(move |r| timeline_row(run, r)))
        .collect();
    Tabular { headers: TIMELINE_HEADERS.to_vec(), rows }
}

/// The columns of [`timeline`].
const TIMELINE_HEADERS: [&str; 25] = [
    "trace",
    "conversation",
    "policy",
    "threshold",
    "request",
    "timestamp",
    "turn",
    "unrecorded",
    "system",
    "user",
    "assistant",
    "thinking",
    "tool_calls",
    "tool_summaries",
    "tool_contents",
    "placeholders",
    "context_tokens",
    "context_estimate",
    "prunable_tokens",
    "prunable_estimate",
    "pruned_tokens",
    "freed_tokens",
    "changed_results",
    "shared_prefix_tokens",
    "recorded_input_tokens",
];

fn timeline_row(run: &RunSummary, r: &RequestRow) -> Vec<String> {
    let c = &r.categories;
    vec![
        run.trace.clone(),
        run.conversation.clone(),
        run.policy.clone(),
        run.threshold.to_string(),
        r.request.to_string(),
        r.timestamp.clone().unwrap_or_default(),
        r.turn.to_string(),
        c.unrecorded.to_string(),
        c.system.to_string(),
        c.user.to_string(),
        c.assistant.to_string(),
        c.thinking.to_string(),
        c.tool_calls.to_string(),
        c.tool_summaries.to_string(),
        c.tool_contents.to_string(),
        c.placeholders.to_string(),
        r.context_tokens.to_string(),
        r.context_estimate.to_string(),
        r.prunable_tokens.to_string(),
        r.prunable_estimate.to_string(),
        r.pruned_tokens.to_string(),
        r.freed_tokens.to_string(),
        r.changed_results.to_string(),
        r.shared_prefix_tokens.to_string(),
        opt(r.recorded_input_tokens),
    ]
}
