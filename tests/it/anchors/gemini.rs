//! `gemini` beside `ToolOutputMaskingService.mask` as Gemini CLI writes it:
//! `google-gemini/gemini-cli` `packages/core/src/services/toolOutputMaskingService.ts` (indexed at
//! `a9ef9f0`; read at `00b7319`, whose `mask()` is the same) and `utils/tokenCalculation.ts`
//! (read at `04fbf50`):
//!
//! ```ts
//! const scanStartIdx = maskingConfig.protectLatestTurn ? history.length - 2 : history.length - 1;
//! for (let i = scanStartIdx; i >= 0; i--) { ... for (let j = parts.length - 1; j >= 0; j--) {
//!   if (!part.functionResponse) continue;
//!   if (!toolOutputContent || this.isAlreadyMasked(toolOutputContent)) continue;
//!   const partTokens = estimateTokenCountSync([part]);
//!   if (!protectionBoundaryReached) {
//!     cumulativeToolTokens += partTokens;
//!     if (cumulativeToolTokens > maskingConfig.toolProtectionThreshold) {
//!       protectionBoundaryReached = true; totalPrunableTokens += partTokens; prunableParts.push(...) }
//!   } else { totalPrunableTokens += partTokens; prunableParts.push(...) } } }
//! if (totalPrunableTokens < maskingConfig.minPrunableTokensThreshold) return ...;
//! ... const savings = tokens - newTaskTokens; if (savings > 0) { mask }
//! ```
//!
//! `estimateTokenCountSync([functionResponse part])` is `floor((name.length +
//! JSON.stringify(response).length) / 4)`, `response` being `{output: text}`; the snippet is
//! `<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: {path}\n</tool_output_masked>`,
//! the preview the pretty-printed response's first and last 250 UTF-16 units (whole up to 500),
//! or for `run_shell_command` its sections with `Output` cut to 10 head and 10 tail lines. All
//! worked out here from the output text. `mask()` runs on `getHistory()` before the request's own
//! content is added (`core/client.ts`), so the history is what earlier requests sent, and
//! `protectLatestTurn` skips its newest entry, the model turn holding the calls.
//!
//! `EXEMPT_TOOLS` (`activate_skill`, `ask_user`, `enter_plan_mode`, `exit_plan_mode`, newer than
//! the commit the policy cites; the list as issue 31 gives it) are neither counted nor masked here;
//! the corpus has no result of those tools (the test counts them), so the policy need not agree.
//!
//! Modelled, as the policy documents them: the file name's random suffix is `xxxxxx` and the
//! directory the policy's stand-in; the previews cut at a char boundary, not inside a surrogate
//! pair; the preview of an output a tool split itself is made from its content; `on=content`
//! masks only a result the seed splits (the others are counted all the same).

use std::collections::BTreeSet;

use super::{Cleared, On, Res, Session, prunable, requests, results, within};

const TAG: &str = "<tool_output_masked";
const EXEMPT_TOOLS: [&str; 4] = ["activate_skill", "ask_user", "enter_plan_mode", "exit_plan_mode"];
const DIR: &str = "/home/user/.gemini/history/5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592/tool-outputs";

/// `JSON.stringify(text)` without its quotes.
fn json_body(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn units(text: &str) -> usize {
    text.encode_utf16().count()
}

/// `estimateTokenCountSync([{functionResponse: {name, response: {output: text}}}])`.
fn tokens(name: &str, text: &str) -> u64 {
    let response = units(&format!("{{\"output\":\"{}\"}}", json_body(text)));
    ((units(name) + response) / 4) as u64
}

/// The first (`head`) or last `n` UTF-16 units of `text`, whole chars only.
fn cut(text: &str, n: usize, head: bool) -> String {
    let chars: Vec<char> = text.chars().collect();
    let (mut taken, mut used) = (Vec::new(), 0);
    let order: Box<dyn Iterator<Item = &char>> =
        if head { Box::new(chars.iter()) } else { Box::new(chars.iter().rev()) };
    for c in order {
        used += c.len_utf16();
        if used > n {
            break;
        }
        taken.push(*c);
    }
    if !head {
        taken.reverse();
    }
    taken.into_iter().collect()
}

/// `formatSimplePreview`.
fn simple(content: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() <= 20 {
        return content.to_owned();
    }
    let omitted = lines.len() - 20;
    format!(
        "{}\n\n... [{omitted} lines omitted] ...\n\n{}",
        lines[..10].join("\n"),
        lines[lines.len() - 10..].join("\n")
    )
}

fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
}

/// `formatShellPreview({output: text})`: `content.split(/^(Output|Error|...): /m)`.
fn shell(text: &str) -> String {
    const NAMES: [&str; 6] =
        ["Output", "Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID"];
    // Section starts: at the text's start or after a line terminator, `Name: `.
    let mut starts = Vec::new();
    let mut at_line_start = true;
    for (i, c) in text.char_indices() {
        if at_line_start {
            for name in NAMES {
                if text[i..].starts_with(&format!("{name}: ")) {
                    starts.push((i, name));
                    break;
                }
            }
        }
        at_line_start = matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}');
    }
    if starts.is_empty() {
        return simple(text);
    }
    let mut parts = Vec::new();
    let before = js_trim(&text[..starts[0].0]);
    if !before.is_empty() {
        parts.push(simple(before));
    }
    for (k, (at, name)) in starts.iter().enumerate() {
        let end = starts.get(k + 1).map_or(text.len(), |s| s.0);
        let body = js_trim(&text[at + name.len() + 2..end]);
        parts.push(if *name == "Output" {
            format!("Output: {}", simple(body))
        } else {
            format!("{name}: {body}")
        });
    }
    parts.join("\n")
}

fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '_' })
        .collect()
}

/// The masked part's estimate.
fn snippet_tokens(r: &Res<'_>) -> u64 {
    let tool = r.tool();
    let text = if r.sizes.presplit.is_some() { r.result.text.to_string() } else { r.whole() };
    let preview = if tool == "run_shell_command" {
        shell(&text)
    } else {
        let content = format!("{{\n  \"output\": \"{}\"\n}}", json_body(&text));
        if units(&content) > 500 {
            format!("{}\n... [TRUNCATED] ...\n{}", cut(&content, 250, true), cut(&content, 250, false))
        } else {
            content
        }
    };
    let name = if tool.is_empty() { "unknown_tool" } else { tool };
    let path = format!("{DIR}/{}_{}_xxxxxx.txt", sanitize(name), sanitize(&r.result.call_id));
    let snippet = format!(
        "{TAG}>\n{preview}\n\nOutput too large. Full output available at: {path}\n</tool_output_masked>"
    );
    tokens(tool, &snippet)
}

fn expected(s: &Session, on: On, protect: u64, minimum: u64) -> Vec<Cleared> {
    let all = results(&s.measured);
    let mut masked: BTreeSet<usize> = BTreeSet::new();
    let mut out = Vec::new();
    for req in requests(&s.measured) {
        let first = within(&all, req.start..req.end).first().map_or(usize::MAX, |r| r.index);
        masked.retain(|i| *i >= first);
        let history = within(&all, req.start..req.previous);
        let (mut cumulative, mut reached, mut prunable_tokens, mut parts) = (0, false, 0, Vec::new());
        for r in history.iter().rev() {
            if masked.contains(&r.index) || r.whole().contains(TAG) || EXEMPT_TOOLS.contains(&r.tool()) {
                continue;
            }
            let t = tokens(r.tool(), &r.whole());
            if !reached {
                cumulative += t;
                reached = cumulative > protect;
                if !reached {
                    continue;
                }
            }
            if prunable(r, on) {
                prunable_tokens += t;
                parts.push((r, t));
            }
        }
        if prunable_tokens >= minimum {
            for (r, t) in parts {
                if t > snippet_tokens(r) {
                    masked.insert(r.index);
                }
            }
        }
        let results = masked.iter().map(|i| (*i, TAG.to_owned() + ">")).collect();
        out.push(Cleared { results, ..Cleared::default() });
    }
    out
}

/// A replacement's first line: the mask's tag (the rest holds the preview and path, whose
/// estimate the transcription checks through the savings test).
fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_owned()
}

#[test]
fn gemini_masks_what_mask_masks_on_every_corpus_session() {
    let Some(sessions) = super::sessions() else { return };
    let exempt: usize = sessions
        .iter()
        .map(|s| results(&s.measured).iter().filter(|r| EXEMPT_TOOLS.contains(&r.tool())).count())
        .sum();
    println!("gemini: {exempt} results of EXEMPT_TOOLS in the corpus");
    assert_eq!(exempt, 0, "the corpus now has results of Gemini's exempt tools: the policy must exempt them");
    let specs = [
        "gemini",
        "gemini:on=content",
        "gemini:protect=20000,minimum=10000",
        "gemini:protect=20000,minimum=10000,on=content",
        "gemini:protect=2000,minimum=1000",
        "gemini:protect=2000,minimum=1000,on=content",
    ];
    super::check("gemini", &specs, first_line, |s, spec, on| {
        let (protect, minimum) = if spec.contains("protect=20000") {
            (20_000, 10_000)
        } else if spec.contains("protect=2000") {
            (2_000, 1_000)
        } else {
            (50_000, 30_000)
        };
        expected(s, on, protect, minimum)
    });
}
