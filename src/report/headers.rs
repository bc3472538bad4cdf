//! How the page shows a table's columns: a header a reader understands, with its unit, in place of
//! the CSV's snake_case name (kept in the header's `title`), and each cell's number written for
//! reading: counts with thousands separators, money in its unit. Only the page changes: the CSV and
//! JSON files the report writes keep their bytes. Pure functions; nothing here touches files.

use crate::chart::thousands;

/// How a column's cells are written on the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// As they are (text, percentages, ratios).
    Text,
    /// Whole numbers, with thousands separators.
    Count,
    /// A cost in the comparison's unit.
    Cost,
    /// A cost in USD.
    Usd,
}

/// Every column name the report's tables use, with the page's header (`{unit}`: the cost unit)
/// and how its cells are written. A name not listed is shown as it is.
const COLUMNS: &[(&str, &str, Kind)] = &[
    ("threshold", "Threshold (bytes)", Kind::Count),
    ("split_results", "Outputs split", Kind::Count),
    ("split_share", "Split (% of outputs)", Kind::Text),
    ("summary_tokens", "Summaries (tokens)", Kind::Count),
    ("content_tokens", "Contents (tokens)", Kind::Count),
    ("overhead_tokens", "Overhead (tokens)", Kind::Count),
    ("peak_context_tokens", "Peak context (tokens)", Kind::Count),
    ("total_input_tokens", "Input (tokens)", Kind::Count),
    ("savings", "Savings (% of input)", Kind::Text),
    ("prune_events", "Prune events", Kind::Count),
    ("mark", "Mark", Kind::Text),
    ("tool", "Tool", Kind::Text),
    ("results", "Outputs", Kind::Count),
    ("output_tokens", "Output (tokens)", Kind::Count),
    ("output_share", "Share of output (%)", Kind::Text),
    ("recommended_threshold", "Recommended threshold (bytes)", Kind::Count),
    ("tool_savings", "Tool savings (% of input)", Kind::Text),
    ("best_threshold", "Best threshold (bytes)", Kind::Count),
    ("best_tool_savings", "Best tool savings (% of input)", Kind::Text),
    ("versus_overall", "Versus overall", Kind::Text),
    ("policy", "Policy", Kind::Text),
    ("requests", "Requests", Kind::Count),
    ("over_window", "Over window (requests)", Kind::Count),
    ("cost", "Cost ({unit})", Kind::Cost),
    ("cost_change", "Cost change (%)", Kind::Text),
    ("cost_usd", "Bill (USD)", Kind::Usd),
    ("reuse_share", "Reused (% of pruned)", Kind::Text),
    ("reused_results", "Reused outputs", Kind::Count),
    ("reused_tokens", "Reused (tokens)", Kind::Count),
    ("note", "Note", Kind::Text),
    ("output_cost_usd", "Output bill (USD)", Kind::Usd),
    ("cold_requests", "Cold requests", Kind::Count),
    ("read_tokens", "Cache reads (tokens)", Kind::Count),
    ("write_tokens", "Cache writes (tokens)", Kind::Count),
    ("rewritten_tokens", "Rewritten (tokens)", Kind::Count),
    ("freed_tokens", "Freed (tokens)", Kind::Count),
    ("events_paying_off", "Events paying off", Kind::Count),
    ("trace", "Trace", Kind::Text),
    ("conversation", "Conversation", Kind::Text),
    ("request", "Request", Kind::Count),
    ("changed_results", "Changed outputs", Kind::Count),
    ("cache", "Cache", Kind::Text),
    ("rewrite_cost", "Rewrite cost ({unit})", Kind::Cost),
    ("break_even_requests", "Break-even (requests)", Kind::Text),
    ("later_requests", "Later requests", Kind::Count),
    ("pays_off", "Pays off", Kind::Text),
    ("estimator", "Estimator", Kind::Text),
    ("group", "Group", Kind::Text),
    ("key", "Tool or kind", Kind::Text),
    ("bytes", "Bytes", Kind::Count),
    ("tokens", "Real tokens", Kind::Count),
    ("estimate", "Estimate (tokens)", Kind::Count),
    ("error", "Error (%)", Kind::Text),
    ("bytes_per_token", "Bytes per token", Kind::Text),
    ("mean_abs_error", "Mean abs. error (%)", Kind::Text),
    ("calibrated_mean_abs_error", "Calibrated mean abs. error (%)", Kind::Text),
    ("setting", "Setting", Kind::Text),
    ("value", "Value", Kind::Text),
    ("file", "File", Kind::Text),
    ("format", "Format", Kind::Text),
    ("conversations", "Conversations", Kind::Count),
];

/// The page's header of column `name` and how its cells are written, costs in `unit`.
pub(crate) fn column(name: &str, unit: &str) -> (String, Kind) {
    match COLUMNS.iter().find(|(n, ..)| *n == name) {
        Some((_, header, kind)) => (header.replace("{unit}", unit), *kind),
        None => (name.to_owned(), Kind::Text),
    }
}

/// `text`, a cell of a column of `kind`, as the page writes it; a cell that does not read as the
/// kind's number is left as it is.
pub(crate) fn cell(text: &str, kind: Kind, unit: &str) -> String {
    match kind {
        Kind::Text => text.to_owned(),
        Kind::Count => text.parse::<u64>().map_or_else(|_| text.to_owned(), thousands),
        Kind::Usd => text.parse::<f64>().map_or_else(|_| text.to_owned(), crate::export::bill::usd),
        Kind::Cost if unit == "USD" => cell(text, Kind::Usd, unit),
        Kind::Cost => match text.parse::<f64>() {
            Ok(v) if (0.0..1e18).contains(&v) => thousands(v.round() as u64),
            _ => text.to_owned(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_say_what_and_in_which_unit() {
        assert_eq!(column("peak_context_tokens", "USD"), ("Peak context (tokens)".to_owned(), Kind::Count));
        assert_eq!(column("cost", "USD"), ("Cost (USD)".to_owned(), Kind::Cost));
        assert_eq!(
            column("rewrite_cost", "input-token equivalents"),
            ("Rewrite cost (input-token equivalents)".to_owned(), Kind::Cost)
        );
        assert_eq!(column("unknown_column", "USD"), ("unknown_column".to_owned(), Kind::Text));
        // Every name is listed once.
        for (i, (name, ..)) in COLUMNS.iter().enumerate() {
            assert!(COLUMNS[i + 1..].iter().all(|(other, ..)| other != name), "{name} twice");
        }
    }

    #[test]
    fn cells_get_thousands_separators_and_money_its_unit() {
        assert_eq!(cell("57428710", Kind::Count, "USD"), "57,428,710");
        assert_eq!(cell("12", Kind::Count, "USD"), "12");
        assert_eq!(cell("", Kind::Count, "USD"), "");
        assert_eq!(cell("34.2%", Kind::Text, "USD"), "34.2%");
        assert_eq!(cell("35.4138", Kind::Cost, "USD"), "$35.41");
        assert_eq!(cell("0.4138", Kind::Usd, "USD"), "$0.4138");
        assert_eq!(cell("10319819", Kind::Cost, "input-token equivalents"), "10,319,819");
        assert_eq!(cell("n/a", Kind::Cost, "tokens"), "n/a");
        assert_eq!(cell("-3", Kind::Count, "USD"), "-3", "not a count: left alone");
    }
}
