//! The lines that say how the bill in USD (`cost_usd`) was priced, shown above the comparison's
//! and the cost analysis's tables: the price table, requests whose output is not recorded, model
//! names the table does not know (priced at its fallback) and, where the log records what each
//! request cost, the recorded total beside the replayed baseline's bill.
//!
//! Model names come from the logs: each is shown through [`model_label`], which keeps the
//! characters model ids are made of and writes any other as `\u{…}`, so a name cannot drive a
//! terminal, break a Markdown table or start a spreadsheet formula.

use crate::analysis::compare::{Comparison, PolicyRow};
use crate::analysis::cost::NO_MODEL;

/// The longest model name shown whole, in characters.
const MAX_LABEL: usize = 80;

/// A model name from a log, safe to print: letters, digits and `.-_:@/` kept, anything else
/// escaped, cut at [`MAX_LABEL`] characters.
pub fn model_label(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == MAX_LABEL {
            out.push('…');
            break;
        }
        if c.is_ascii_alphanumeric() || ".-_:@/".contains(c) {
            out.push(c);
        } else {
            out.extend(c.escape_unicode());
        }
    }
    out
}

/// USD with cents, or with four decimals below a dollar: the analysis's own, so a sentence and a
/// table cell write the same amount alike.
pub use crate::analysis::sweep::usd;

/// The lines about `cost_usd` for a comparison (empty when nothing was replayed).
pub fn usd_lines(c: &Comparison) -> Vec<String> {
    let Some(base) = c.policies.first().filter(|p| p.requests > 0) else { return Vec::new() };
    let table = &c.cache.prices.table;
    let mut lines = vec![format!(
        "cost_usd is the whole bill in USD: cache reads, writes and recorded output tokens at the prices of each \
         request's model ({} price table, docs/prices.md).",
        model_label(&table.name)
    )];
    if base.cost.output_unrecorded > 0 {
        lines.push(format!(
            "{} of {} requests record no output tokens: their output is not in cost_usd.",
            base.cost.output_unrecorded, base.requests
        ));
    }
    if !base.cost.fallback_models.is_empty() {
        lines.push(fallback_line(c, base));
    }
    if let Some(line) = recorded_line(base) {
        lines.push(line);
    }
    lines
}

/// The models priced at the table's fallback, with their request counts.
fn fallback_line(c: &Comparison, base: &PolicyRow) -> String {
    let fallback = c.cache.prices.table.fallback();
    let names: Vec<String> = base
        .cost
        .fallback_models
        .iter()
        .map(|(name, n)| {
            let requests = if *n == 1 { "1 request".to_owned() } else { format!("{n} requests") };
            if name == NO_MODEL {
                format!("no model named ({requests})")
            } else {
                format!("`{}` ({requests})", model_label(name))
            }
        })
        .collect();
    format!(
        "Not in the price table, priced as `{}` (${} input, ${} output per million tokens): {}.",
        model_label(&fallback.model),
        fallback.input,
        fallback.output,
        names.join(", ")
    )
}

/// The recorded cost beside the baseline's bill, when the log records one.
fn recorded_line(base: &PolicyRow) -> Option<String> {
    let recorded = base.cost.recorded_cost_usd?;
    let change = if recorded > 0.0 {
        format!(" ({:+.1}%)", (base.cost.cost_usd / recorded - 1.0) * 100.0)
    } else {
        String::new()
    };
    Some(format!(
        "The log records {} for the {} requests that record a cost; `{}` as replayed costs {}{change}.",
        usd(recorded),
        base.cost.recorded_cost_requests,
        base.policy,
        usd(base.cost.cost_usd)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_name_from_a_log_cannot_drive_a_terminal_or_break_a_table() {
        assert_eq!(model_label("claude-sonnet-4-5@20250929"), "claude-sonnet-4-5@20250929");
        assert_eq!(
            model_label("x\u{1b}]0;owned\u{7}|=1"),
            "x\\u{1b}\\u{5d}0\\u{3b}owned\\u{7}\\u{7c}\\u{3d}1"
        );
        assert_eq!(model_label(&"a".repeat(200)).chars().count(), MAX_LABEL + 1);
    }

    #[test]
    fn dollars_show_cents_or_four_decimals_below_a_dollar() {
        assert_eq!((usd(12.345), usd(0.01234)), ("$12.35".to_owned(), "$0.0123".to_owned()));
    }
}
