//! Rendering a [`ReconcileReport`]: the fits per conversation, the worst requests and the notes,
//! as a terminal table, Markdown, CSV (the fits, or with `--per-request` every request) or JSON
//! (the report verbatim). Columns are defined once here and shared by the table-like formats; not
//! derived from the serde structs, whose `f64` fields these cells format (`fixed`, `percent`).

use anyhow::Result;

use super::columns::{Tabular, percent};
use super::{ExportFormat, csv, markdown, table};
use crate::analysis::reconcile::{
    Basis, Calibrated, ConversationFit, ErrorStats, FormatSummary, ReconcileReport, RequestFit,
};

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn fixed(v: Option<f64>, decimals: usize) -> String {
    v.map(|v| format!("{v:.decimals$}")).unwrap_or_default()
}

fn basis(b: Basis) -> &'static str {
    match b {
        Basis::PerRequest => "per_request",
        Basis::Totals => "totals",
        Basis::None => "none",
    }
}

/// Median, p90 and max of the absolute (tokens) then relative errors.
fn error_cells(e: Option<ErrorStats>) -> [String; 6] {
    [
        fixed(e.map(|e| e.median_abs), 0),
        fixed(e.map(|e| e.p90_abs), 0),
        fixed(e.map(|e| e.max_abs), 0),
        percent(e.map(|e| e.median_rel)),
        percent(e.map(|e| e.p90_rel)),
        percent(e.map(|e| e.max_rel)),
    ]
}

/// The calibrated prediction's error (each request fitted without it): median, p90, max, total.
fn calibrated_cells(k: &Calibrated) -> [String; 4] {
    [percent(k.median_rel), percent(k.p90_rel), percent(k.max_rel), fixed(k.total_ratio, 3)]
}

/// The columns of [`fits`] (those of [`error_cells`] and [`calibrated_cells`] among them).
pub const FIT_HEADERS: [&str; 27] = [
    "trace",
    "conversation",
    "format",
    "provider",
    "tokenizer_exact",
    "requests",
    "recorded_requests",
    "basis",
    "a",
    "b",
    "r2",
    "median_abs",
    "p90_abs",
    "max_abs",
    "median_rel",
    "p90_rel",
    "max_rel",
    "replayed_total",
    "recorded_total",
    "total_ratio",
    "calibration",
    "overhead",
    "ratio",
    "calibrated_median",
    "calibrated_p90",
    "calibrated_max",
    "calibrated_total_ratio",
];

/// One row per conversation.
pub fn fits(conversations: &[ConversationFit]) -> Tabular {
    Tabular {
        headers: FIT_HEADERS.to_vec(),
        rows: conversations
            .iter()
            .map(|c| {
                let mut row = vec![
                    c.trace.clone(),
                    c.conversation.clone(),
                    c.format.clone(),
                    c.provider.clone(),
                    c.tokenizer_exact.to_string(),
                    c.requests.to_string(),
                    c.recorded_requests.to_string(),
                    basis(c.basis).to_owned(),
                    fixed(c.a, 0),
                    fixed(c.b, 3),
                    fixed(c.r2, 4),
                ];
                row.extend(error_cells(c.error));
                row.extend([c.replayed_total.to_string(), opt(c.recorded_total), fixed(c.total_ratio, 3)]);
                let k = &c.calibration;
                row.extend([k.method.name().to_owned(), k.overhead.to_string(), format!("{:.3}", k.ratio)]);
                row.extend(calibrated_cells(&c.calibrated));
                row
            })
            .collect(),
    }
}

/// The columns of [`formats`].
pub const FORMAT_HEADERS: [&str; 15] = [
    "format",
    "conversations",
    "fitted_conversations",
    "recorded_requests",
    "median_abs",
    "p90_abs",
    "max_abs",
    "median_rel",
    "p90_rel",
    "max_rel",
    "calibrated_requests",
    "calibrated_median",
    "calibrated_p90",
    "calibrated_max",
    "calibrated_total_ratio",
];

/// Errors pooled per format.
pub fn formats(summaries: &[FormatSummary]) -> Tabular {
    Tabular {
        headers: FORMAT_HEADERS.to_vec(),
        rows: summaries
            .iter()
            .map(|s| {
                let mut row = vec![
                    s.format.clone(),
                    s.conversations.to_string(),
                    s.fitted_conversations.to_string(),
                    s.recorded_requests.to_string(),
                ];
                row.extend(error_cells(s.error));
                row.push(s.calibrated.requests.to_string());
                row.extend(calibrated_cells(&s.calibrated));
                row
            })
            .collect(),
    }
}

/// The columns of the table below, in order.
pub const REQUEST_HEADERS: [&str; 20] = [
    "trace",
    "conversation",
    "request",
    "timestamp",
    "replayed",
    "recorded",
    "fitted",
    "error",
    "relative_error",
    "calibrated",
    "system",
    "user",
    "assistant",
    "thinking",
    "hidden_reasoning",
    "server_side",
    "tool_calls",
    "tool_outputs",
    "images",
    "image_tokens",
];

/// One row per request.
pub fn requests(rows: &[RequestFit]) -> Tabular {
    Tabular {
        headers: REQUEST_HEADERS.to_vec(),
        rows: rows
            .iter()
            .map(|r| {
                let p = &r.parts;
                vec![
                    r.trace.clone(),
                    r.conversation.clone(),
                    r.request.to_string(),
                    r.timestamp.clone().unwrap_or_default(),
                    r.replayed.to_string(),
                    opt(r.recorded),
                    fixed(r.fitted, 0),
                    fixed(r.error, 0),
                    percent(r.relative_error),
                    fixed(r.calibrated, 0),
                    p.system.to_string(),
                    p.user.to_string(),
                    p.assistant.to_string(),
                    p.thinking.to_string(),
                    p.hidden_reasoning.to_string(),
                    p.server_side.to_string(),
                    p.tool_calls.to_string(),
                    p.tool_outputs.to_string(),
                    p.images.to_string(),
                    p.image_tokens.to_string(),
                ]
            })
            .collect(),
    }
}

fn every_request(report: &ReconcileReport) -> Vec<RequestFit> {
    report.conversations.iter().flat_map(|c| c.requests_detail.iter().flatten().cloned()).collect()
}

/// Renders the report in `format`. `per_request` adds (table, Markdown) or selects (CSV) the
/// per-request rows; JSON carries them when the report holds them.
pub fn render(report: &ReconcileReport, format: ExportFormat, per_request: bool) -> Result<Vec<u8>> {
    let notes = || {
        let mut out = format!("tokenizer: {}\n", report.tokenizer);
        for n in &report.notes {
            out.push_str(&format!("note: {n}\n"));
        }
        out
    };
    Ok(match format {
        ExportFormat::Json => {
            let mut out = serde_json::to_vec_pretty(report)?;
            out.push(b'\n');
            out
        }
        ExportFormat::Csv if per_request => csv::render_tabular(&requests(&every_request(report)))?,
        ExportFormat::Csv => csv::render_tabular(&fits(&report.conversations))?,
        ExportFormat::Table(fit) => {
            let mut out = String::new();
            for (i, (title, t)) in sections(report, per_request).iter().enumerate() {
                if i > 0 {
                    out.push_str("\n\n");
                    out.push_str(&table::wrapped(title, fit));
                }
                out.push_str(&table::render_fitted(t, fit));
            }
            out.push_str("\n\n");
            let notes = notes();
            out.push_str(&table::wrapped(notes.strip_suffix('\n').unwrap_or(&notes), fit));
            out.into_bytes()
        }
        ExportFormat::Markdown => {
            let mut out = String::new();
            for (i, (title, t)) in sections(report, per_request).iter().enumerate() {
                let gap = if i > 0 { "\n" } else { "" };
                out.push_str(&format!("{gap}## {title}\n\n{}", markdown::render_tabular(t)));
            }
            out.push('\n');
            out.push_str(&notes());
            out.into_bytes()
        }
    })
}

/// The tables a person reads, with their titles, in order.
fn sections(report: &ReconcileReport, per_request: bool) -> Vec<(&'static str, Tabular)> {
    let mut out = vec![
        ("Fit per conversation", fits(&report.conversations)),
        ("Error after the fit, pooled per format", formats(&report.formats)),
        ("Worst requests after the fit (largest |error| first)", requests(&report.worst)),
    ];
    if per_request {
        out.push(("Every request", requests(&every_request(report))));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::reconcile::SentParts;

    fn report() -> ReconcileReport {
        let row = RequestFit {
            trace: "t.jsonl".into(),
            conversation: "main".into(),
            request: 0,
            id: None,
            timestamp: None,
            replayed: 100,
            recorded: Some(1500),
            fitted: Some(1490.4),
            error: Some(9.6),
            relative_error: Some(0.0064),
            calibrated: Some(1480.0),
            parts: SentParts { user: 100, images: 1, ..Default::default() },
        };
        ReconcileReport {
            tokenizer: "o200k".into(),
            conversations: vec![ConversationFit {
                trace: "t.jsonl".into(),
                conversation: "main".into(),
                format: "claude-stream".into(),
                provider: "Anthropic".into(),
                requests: 1,
                recorded_requests: 1,
                basis: Basis::PerRequest,
                a: Some(1400.0),
                b: Some(1.0),
                error: Some(ErrorStats { median_abs: 9.6, p90_abs: 9.6, max_abs: 9.6, ..Default::default() }),
                replayed_total: 100,
                recorded_total: Some(1500),
                total_ratio: Some(15.0),
                requests_detail: Some(vec![row.clone()]),
                ..Default::default()
            }],
            formats: vec![FormatSummary {
                format: "claude-stream".into(),
                conversations: 1,
                fitted_conversations: 1,
                recorded_requests: 1,
                error: Some(ErrorStats { median_abs: 9.6, p90_abs: 9.6, max_abs: 9.6, ..Default::default() }),
                calibrated: Calibrated {
                    requests: 3,
                    median_rel: Some(0.01),
                    p90_rel: Some(0.02),
                    max_rel: Some(0.03),
                    total_ratio: Some(0.99),
                    reason: None,
                },
            }],
            worst: vec![row],
            notes: vec!["Anthropic: Claude's tokenizer is not public".into()],
            ..Default::default()
        }
    }

    #[test]
    fn the_table_shows_fits_worst_requests_and_notes() {
        let out = String::from_utf8(
            render(&report(), ExportFormat::Table(crate::export::fit::Fit::Wide), false).unwrap(),
        )
        .unwrap();
        insta::assert_snapshot!(out);
    }

    #[test]
    fn csv_is_the_fits_or_every_request() {
        let out = String::from_utf8(render(&report(), ExportFormat::Csv, false).unwrap()).unwrap();
        insta::assert_snapshot!(out);
        let out = String::from_utf8(render(&report(), ExportFormat::Csv, true).unwrap()).unwrap();
        assert!(out.starts_with("trace,conversation,request,"), "{out}");
        assert_eq!(out.lines().count(), 2);
    }

    #[test]
    fn json_reads_back_through_the_strict_types() {
        let bytes = render(&report(), ExportFormat::Json, false).unwrap();
        let back: ReconcileReport = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(back, report());
    }
}
