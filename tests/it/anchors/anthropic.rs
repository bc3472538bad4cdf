//! `anthropic` beside context editing's `clear_tool_uses_20250919` as Anthropic documents it
//! (platform.claude.com/docs/en/build-with-claude/context-editing; no source is published):
//! "When activated, the API clears the oldest tool results in chronological order, replacing
//! them with placeholder text"; `trigger` (input tokens, or tool uses), `keep` ("the number of
//! recent tool use/result pairs to keep"), `clear_at_least` ("context will only be modified if at
//! least this many tokens can be removed"), `exclude_tools`. The client sends its full history
//! and the server edits each request, so the rule is worked out afresh from the whole history
//! at every request.
//!
//! Inputs from the library: the prompt's input tokens are the calibrated context the replay of
//! `none` sends at that request (the provider's tokens, estimated: the report's tokenizer scaled
//! by the fitted ratio, plus the fitted overhead for the system prompt and tools); what a clear
//! frees is the cleared text's calibrated tokens less the placeholder's (measured by the report's
//! meter, as the replay measures the text a policy writes). Modelled: the placeholder
//! `[Old tool result content cleared]` is ours (the API's is not published); `on=content`
//! clears only a result the seed splits.

use ctxbudget::Meter;

use super::{Cleared, On, Session, THRESHOLD, prunable, requests, results, within};

const PLACEHOLDER: &str = "[Old tool result content cleared]";

struct Rule {
    trigger: u64,
    by_tool_uses: bool,
    keep: usize,
    clear_at_least: u64,
}

fn expected(s: &Session, on: On, rule: &Rule, meter: &Meter) -> Vec<Cleared> {
    let none = ctxbudget::PolicySpec::parse("none").unwrap().build();
    let mut none = none;
    let run = ctxbudget::replay::replay(&s.measured, THRESHOLD, &mut *none, meter);
    let placeholder = meter.measure(PLACEHOLDER).tokens;
    let all = results(&s.measured);
    requests(&s.measured)
        .iter()
        .zip(&run.rows)
        .map(|(req, row)| {
            let context = within(&all, req.start..req.end);
            let activated = if rule.by_tool_uses {
                context.len() as u64 > rule.trigger
            } else {
                row.context_tokens > rule.trigger
            };
            let mut cleared = Cleared::default();
            if !activated {
                return cleared;
            }
            let oldest = &context[..context.len().saturating_sub(rule.keep)];
            let clearable: Vec<_> = oldest.iter().filter(|r| prunable(r, on)).collect();
            let freed: u64 = clearable
                .iter()
                .map(|r| {
                    let (summary, content) = r.sizes.split_at(THRESHOLD);
                    let text = match on {
                        On::Output => summary.tokens + content.map_or(0, |c| c.tokens),
                        On::Content => content.map_or(0, |c| c.tokens),
                    };
                    text.saturating_sub(placeholder)
                })
                .sum();
            if freed >= rule.clear_at_least {
                cleared.results = clearable.iter().map(|r| (r.index, PLACEHOLDER.to_owned())).collect();
            }
            cleared
        })
        .collect()
}

#[test]
fn anthropic_clears_what_the_documented_rule_clears_on_every_corpus_session() {
    let specs = [
        "anthropic",
        "anthropic:on=content",
        "anthropic:trigger=20000",
        "anthropic:trigger=20000,on=content",
        "anthropic:trigger=30000,keep=5,clear_at_least=20000",
        "anthropic:trigger=30000,keep=5,clear_at_least=20000,on=content",
        "anthropic:trigger=20,trigger_type=tool_uses",
        "anthropic:trigger=20,trigger_type=tool_uses,on=content",
    ];
    let meter = super::meter();
    super::check("anthropic", &specs, str::to_owned, |s, spec, on| {
        let rule = if spec.contains("tool_uses") {
            Rule { trigger: 20, by_tool_uses: true, keep: 3, clear_at_least: 0 }
        } else if spec.contains("keep=5") {
            Rule { trigger: 30_000, by_tool_uses: false, keep: 5, clear_at_least: 20_000 }
        } else if spec.contains("trigger=20000") {
            Rule { trigger: 20_000, by_tool_uses: false, keep: 3, clear_at_least: 0 }
        } else {
            Rule { trigger: 100_000, by_tool_uses: false, keep: 3, clear_at_least: 0 }
        };
        expected(s, on, &rule, &meter)
    });
}
