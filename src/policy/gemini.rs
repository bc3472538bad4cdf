//! `gemini` — Gemini CLI tool output masking (`ToolOutputMaskingService`), with its defaults.
//!
//! Source: `google-gemini/gemini-cli`, `packages/core/src/services/toolOutputMaskingService.ts`
//! (`DEFAULT_TOOL_PROTECTION_THRESHOLD = 50000`, `DEFAULT_MIN_PRUNABLE_TOKENS_THRESHOLD = 30000`,
//! `DEFAULT_PROTECT_LATEST_TURN = true`, `EXEMPT_TOOLS`, `mask()`, the preview and snippet
//! formats; read at `a1f2aac`, which added `EXEMPT_TOOLS` (v0.29.0), and as
//! `packages/core/src/context/toolOutputMaskingService.ts` at `5411f11`, the same rule with
//! `save_memory` no longer exempt since `7504259` (v0.44.0)),
//! `packages/core/src/utils/tokenCalculation.ts` (`estimateTokenCountSync`), and
//! `packages/core/src/core/client.ts` (`tryMaskToolOutputs(this.getHistory())` before every model
//! call; a masked history replaces the chat history, so masking is sticky). ANCHORS.md §5.
//!
//! Mechanism, as `mask()` does it: scan the tool outputs newest → oldest, skipping those of the
//! exempt tools and those already masked (neither counts towards any total); add each one's
//! estimate to a running total; the newest `protect` tokens are protected,
//! the output that crosses that boundary and every older one are prunable; mask only if the
//! prunable outputs total at least `minimum`. Each masked output is replaced by
//! `<tool_output_masked>\n{preview}\n\nOutput too large. Full output available at: {path}\n</tool_output_masked>`
//! (only if that is smaller by the same estimate), where the preview is the first and last 250
//! chars of the response pretty-printed as JSON, or, for the shell tool, its sections with the
//! `Output` cut to 10 head and 10 tail lines.
//!
//! Decisions:
//! - **The latest turn.** `mask()` runs on `getHistory()`, before the current request's content
//!   (the user message, or the function responses the model is waiting for) is appended; so the
//!   outputs entering with this request are never scanned, and `protectLatestTurn` then skips the
//!   newest history entry, the model turn that called those tools. In the replay the results that
//!   entered since the previous request are outside the scan, which is that protection.
//! - **Estimate.** A tool output is a `functionResponse` part, which `estimateTokenCountSync`
//!   counts as `(name.length + JSON.stringify(response).length) / 4`, `response` being
//!   `{"output": text}` (UTF-16 length, JSON escapes included). The 0.25-per-ASCII-char /
//!   1.3-per-other-char heuristic of the same file applies to *text* parts only; `estimate=text`
//!   decides with it instead ([`Estimator::GeminiText`]).
//! - **Exempt tools.** `mask()` passes over an output of a tool in `EXEMPT_TOOLS` before it
//!   estimates it, so it is neither protected nor prunable: it does not fill the protected window
//!   nor count towards `minimum`. The default list is the newest upstream one; `exempt_tools=`
//!   (empty) gives the rule before `a1f2aac`, and adding `save_memory` the rule of v0.29.0 to
//!   v0.43.
//! - **Already masked.** `isAlreadyMasked` looks for the mask tag in the response's JSON, which
//!   holds the output's text unescaped there; so an output that quotes the tag (a session reading
//!   Gemini CLI's source) is passed over as if masked, here too.
//! - **Path and preview.** The file name ends in a random suffix; the replay writes `xxxxxx` there
//!   and uses `dir` for the directory, so the snippet costs what a real one would, give or take a
//!   few tokens. JavaScript slices UTF-16 units; the preview is cut at the nearest char boundary.

use super::estimator::JSON_ESCAPED_UNITS;
use super::{
    Content, Edit, Estimator, Kind, List, On, Param, Peak, Policy, PolicyReport, ResultState, Unfired, View,
};
use crate::model::Tokens;

/// The opening of a masked output, which `isAlreadyMasked` looks for.
pub const MASK_TAG: &str = "<tool_output_masked";

/// The `gemini` policy.
pub const KIND: Kind = Kind {
    name: "gemini",
    about: "tool output masking: protect the newest `protect` tool tokens, mask older outputs with \
            a head/tail preview when at least `minimum` are prunable",
    source: "google-gemini/gemini-cli packages/core/src/services/toolOutputMaskingService.ts (read at a1f2aac, \
             EXEMPT_TOOLS as in packages/core/src/context/toolOutputMaskingService.ts at 5411f11), \
             utils/tokenCalculation.ts; differences: docs/policies.md (ANCHORS.md §5)",
    params: &[
        super::ON_OUTPUT,
        Param {
            key: "protect",
            default: "50000",
            about: "newest tool-output tokens never masked (toolProtectionThreshold)",
        },
        Param {
            key: "minimum",
            default: "30000",
            about: "mask only if at least this many tokens are prunable (minPrunableTokensThreshold)",
        },
        Param {
            key: "shell_tools",
            default: "run_shell_command",
            about: "tools previewed as shell output (Output: head/tail lines)",
        },
        Param {
            key: "exempt_tools",
            default: "activate_skill,ask_user,enter_plan_mode,exit_plan_mode",
            about: "tools whose outputs are never masked nor counted (EXEMPT_TOOLS; v0.29-v0.43 also \
                    save_memory; empty: before v0.29)",
        },
        Param { key: "dir", default: DEFAULT_DIR, about: "directory written into the snippet's path" },
        Param {
            key: "estimate",
            default: "response",
            about: "response (functionResponse JSON length / 4) or text (0.25/1.3 per char)",
        },
    ],
    build: |p| {
        let params: GeminiParams = p.typed()?;
        Ok(super::builder(move || {
            let p = params.clone();
            super::with_on(
                p.on,
                Box::new(Gemini {
                    protect: p.protect,
                    minimum: p.minimum,
                    shell_tools: p.shell_tools,
                    exempt_tools: p.exempt_tools,
                    dir: p.dir,
                    text_estimate: p.estimate == Estimate::Text,
                    scan: Scan::default(),
                    peak: Peak::default(),
                    fired: false,
                }),
            )
        }))
    },
};

/// The parameters of `gemini` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct GeminiParams {
    pub on: On,
    pub protect: Tokens,
    pub minimum: Tokens,
    pub shell_tools: List,
    pub exempt_tools: List,
    pub dir: String,
    pub estimate: Estimate,
}

/// What Gemini's estimate of an output counts (`estimate=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Estimate {
    /// The function response as sent.
    Response,
    /// The output text alone.
    Text,
}

/// Gemini CLI keeps tool outputs under the project's history directory (`~/.gemini/history/<sha256
/// of the project path>`); a fixed stand-in of the same length.
const DEFAULT_DIR: &str = "/home/user/.gemini/history/5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592/tool-outputs";

/// Gemini CLI's tool output masking.
pub struct Gemini {
    protect: Tokens,
    minimum: Tokens,
    shell_tools: Vec<String>,
    exempt_tools: Vec<String>,
    dir: String,
    text_estimate: bool,
    scan: Scan,
    /// The most tool output it found beyond the protected window; whether it masked any.
    peak: Peak,
    fired: bool,
}

/// Where `mask()`'s newest-to-oldest scan stands in the current context, carried from request to
/// request. The history only grows at its new end and masking only takes outputs at or before the
/// boundary, so the boundary only moves towards the new end: each request takes in the outputs
/// that became history, moves the boundary past the outputs the protected window no longer holds,
/// and masks what is pending. That is the same decision as rescanning the whole history, and
/// each output is estimated once and passed once, so the policy is linear in the trace.
#[derive(Debug, Default)]
struct Scan {
    /// Compactions seen: a new one starts a context, and the scan over.
    compactions: usize,
    /// Estimates of the outputs taken into the history so far, by position in the context;
    /// `None` for one `mask()` passes over (an exempt tool's, or one already holding the tag).
    estimates: Vec<Option<Tokens>>,
    /// Position of the boundary: the newest output at which the running total from the newest
    /// first exceeds `protect`. It and every unmasked output before it are prunable.
    boundary: Option<usize>,
    /// Estimates of the outputs after the boundary (at most `protect`).
    protected: Tokens,
    /// Estimates of the present, unmasked outputs up to the boundary.
    prunable: Tokens,
    /// Of those, the ones whose snippet is smaller (the others are never masked): position,
    /// estimate and snippet, oldest first.
    pending: Vec<(usize, Tokens, String)>,
}

impl Gemini {
    /// The estimate of a tool output (or of the snippet that would replace it) whose text is
    /// `escaped` UTF-16 units long as a JSON string body and measures `m`.
    fn estimate(
        &self,
        view: &View<'_>,
        tool: &str,
        escaped: impl FnOnce() -> u64,
        m: &crate::tokens::TextSize,
    ) -> Tokens {
        if self.text_estimate {
            view.tokens(Estimator::GeminiText, m)
        } else {
            view.tokens_with(|| response_tokens_of(tool, escaped()), m)
        }
    }

    /// Whether `mask()` passes over `r` without counting it: an output of an exempt tool, or one
    /// whose text holds the mask tag (`isAlreadyMasked`; the replay's own masks are behind the
    /// boundary and never looked at again).
    fn passes_over(&self, r: &ResultState<'_>) -> bool {
        self.exempt_tools.iter().any(|t| t == r.tool()) || r.result.text.contains(MASK_TAG)
    }

    fn snippet(&self, r: &ResultState<'_>) -> String {
        let tool = r.tool();
        let preview = if self.shell_tools.iter().any(|t| t == tool) {
            shell_preview(&r.result.text)
        } else {
            general_preview(&r.result.text)
        };
        let name = if tool.is_empty() { "unknown_tool" } else { tool };
        let path = format!("{}/{}_{}_xxxxxx.txt", self.dir, sanitize(name), sanitize(&r.result.call_id));
        format!(
            "{MASK_TAG}>\n{preview}\n\nOutput too large. Full output available at: {path}\n</tool_output_masked>"
        )
    }
}

impl Policy for Gemini {
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>) {
        if view.compactions != self.scan.compactions {
            self.scan = Scan { compactions: view.compactions, ..Scan::default() };
        }
        // Results that entered with this request are the request itself, not yet history.
        let history = view.results.partition_point(|r| r.first_request < view.request);
        for r in &view.results[self.scan.estimates.len()..history] {
            if self.passes_over(r) {
                self.scan.estimates.push(None);
                continue;
            }
            let tokens = self.estimate(
                view,
                r.tool(),
                || r.result.derived(JSON_ESCAPED_UNITS, json_escaped_utf16),
                &r.output(),
            );
            self.scan.estimates.push(Some(tokens));
            self.scan.protected += tokens;
        }
        // Outputs after the boundary are unmasked (masking stops at the boundary), so moving it
        // takes each one's estimate out of the protected window.
        while self.scan.protected > self.protect {
            let next = self.scan.boundary.map_or(0, |b| b + 1);
            self.scan.boundary = Some(next);
            // An output passed over is neither protected nor prunable: the crossing one is the
            // next counted one.
            let Some(tokens) = self.scan.estimates[next] else { continue };
            self.scan.protected -= tokens;
            // Only a present content can be masked in the seed's model.
            let r = &view.results[next];
            if matches!(r.content, Content::Present(_)) {
                self.scan.prunable += tokens;
                let snippet = self.snippet(r);
                let estimate =
                    self.estimate(view, r.tool(), || json_escaped_utf16(&snippet), &view.measure(&snippet));
                if estimate < tokens {
                    self.scan.pending.push((next, tokens, snippet));
                }
            }
        }
        self.peak.see(self.scan.prunable);
        if self.scan.prunable < self.minimum {
            return;
        }
        self.fired |= !self.scan.pending.is_empty();
        for (position, tokens, snippet) in self.scan.pending.drain(..) {
            edits.push(Edit::Replace(view.results[position].index, snippet));
            self.scan.prunable -= tokens;
        }
    }

    fn report(&self) -> PolicyReport {
        let template = format!(
            "masks once the tool output beyond the newest {} tokens reaches {} tokens; peak {{peak}}",
            self.protect, self.minimum
        );
        PolicyReport {
            unfired: (!self.fired).then(|| Unfired::new(template, self.peak.0)),
            ..PolicyReport::default()
        }
    }
}

/// UTF-16 length of `text` as a JSON string body (`JSON.stringify` escapes).
///
/// Counted on the bytes (a loop over `chars()` was 6% of a report's time): every byte that is not
/// a UTF-8 continuation byte starts one UTF-16 unit, a 4-byte char's lead byte one more, and an
/// escaped ASCII byte adds what its escape adds (`\n` one, `\u0001` five).
pub fn json_escaped_utf16(text: &str) -> u64 {
    const EXTRA: [u8; 128] = {
        let mut extra = [0u8; 128];
        let mut b = 0;
        while b < 0x20 {
            extra[b] = 5;
            b += 1;
        }
        let short = [b'"', b'\\', b'\n', b'\r', b'\t', 0x08, 0x0c];
        let mut i = 0;
        while i < short.len() {
            extra[short[i] as usize] = 1;
            i += 1;
        }
        extra
    };
    text.bytes()
        .map(|b| match b {
            0..=0x7f => 1 + u64::from(EXTRA[b as usize]),
            0x80..=0xbf => 0,
            0xc0..=0xef => 1,
            _ => 2,
        })
        .sum()
}

/// `estimateTokenCountSync([functionResponse part])`: `(name.length + JSON.stringify({output:
/// text}).length) / 4`, rounded down, lengths in UTF-16 units.
pub fn response_tokens(tool: &str, text: &str) -> Tokens {
    response_tokens_of(tool, json_escaped_utf16(text))
}

/// [`response_tokens`] of a text `escaped` UTF-16 units long as a JSON string body.
fn response_tokens_of(tool: &str, escaped: u64) -> Tokens {
    let name: u64 = tool.encode_utf16().count() as u64;
    // `{"output":"` + escaped text + `"}`.
    (name + 13 + escaped) / 4
}

/// `sanitizeFilenamePart(...).toLowerCase()`: anything but ASCII letters, digits, `-` and `_`
/// becomes `_`.
fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c.to_ascii_lowercase() } else { '_' })
        .collect()
}

/// The general preview: `JSON.stringify({output: text}, null, 2)`, whole up to 500 UTF-16 units,
/// else its first and last 250 around `\n... [TRUNCATED] ...\n`.
///
/// Only the ends of a long output are escaped: escaping is char by char, so the JSON of the
/// first (last) 250 chars, each at least one unit, starts (ends) as the whole JSON does, and its
/// length from [`json_escaped_utf16`] when it may be short. A masked output thus costs the same whatever its
/// size (escaping whole outputs was two thirds of a 16× trace's replay under this policy).
pub fn general_preview(text: &str) -> String {
    const OPEN: &str = "{\n  \"output\": \"";
    const CLOSE: &str = "\"\n}";
    const ENDS: usize = 250;
    // A char is at most four bytes and at least one unit, so a long text needs no exact length.
    let short = text.len() <= 4 * 2 * ENDS
        && (OPEN.len() + CLOSE.len()) as u64 + json_escaped_utf16(text) <= 2 * ENDS as u64;
    if short {
        return format!("{OPEN}{}{CLOSE}", json_string_body(text));
    }
    let first = text.char_indices().nth(ENDS).map_or(text, |(i, _)| &text[..i]);
    let last = text.char_indices().rev().nth(ENDS - 1).map_or(text, |(i, _)| &text[i..]);
    let head = format!("{OPEN}{}", json_string_body(first));
    let tail = format!("{}{CLOSE}", json_string_body(last));
    format!("{}\n... [TRUNCATED] ...\n{}", utf16_head(&head, ENDS), utf16_tail(&tail, ENDS))
}

/// `text` escaped as the body of a JSON string (without the quotes).
fn json_string_body(text: &str) -> String {
    let quoted = serde_json::Value::from(text).to_string();
    quoted[1..quoted.len() - 1].to_owned()
}

/// The shell preview (`formatShellPreview`): the text before the first section and the `Output`
/// section cut to head and tail lines, the other sections (`Error`, `Exit Code`, …) whole.
pub fn shell_preview(output: &str) -> String {
    const SECTIONS: [&str; 6] =
        ["Output", "Error", "Exit Code", "Signal", "Background PIDs", "Process Group PGID"];
    // Where each `^Name: ` (multiline) starts, and how long the `Name: ` is.
    let mut starts: Vec<(usize, &str)> = Vec::new();
    let mut line_start = true;
    for (i, c) in output.char_indices() {
        if line_start {
            let rest = &output[i..];
            if let Some(name) =
                SECTIONS.iter().find(|n| rest.strip_prefix(**n).is_some_and(|r| r.starts_with(": ")))
            {
                starts.push((i, name));
            }
        }
        line_start = matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}');
    }
    if starts.is_empty() {
        return simple_preview(output);
    }
    let mut parts = Vec::new();
    let before = output[..starts[0].0].trim();
    if !before.is_empty() {
        parts.push(simple_preview(before));
    }
    for (k, (at, name)) in starts.iter().enumerate() {
        let body_start = at + name.len() + 2;
        let body_end = starts.get(k + 1).map_or(output.len(), |next| next.0);
        let body = output[body_start..body_end].trim();
        if *name == "Output" {
            parts.push(format!("Output: {}", simple_preview(body)));
        } else {
            parts.push(format!("{name}: {body}"));
        }
    }
    parts.join("\n")
}

/// `formatSimplePreview`: whole up to 20 lines, else 10 head and 10 tail lines.
fn simple_preview(content: &str) -> String {
    let lines: Vec<&str> = content.split('\n').collect();
    if lines.len() <= 20 {
        return content.to_owned();
    }
    format!(
        "{}\n\n... [{} lines omitted] ...\n\n{}",
        lines[..10].join("\n"),
        lines.len() - 20,
        lines[lines.len() - 10..].join("\n")
    )
}

/// The longest prefix of at most `units` UTF-16 units.
pub fn utf16_head(text: &str, units: usize) -> &str {
    let mut n = 0;
    for (i, c) in text.char_indices() {
        n += c.len_utf16();
        if n > units {
            return &text[..i];
        }
    }
    text
}

/// The longest suffix of at most `units` UTF-16 units.
pub fn utf16_tail(text: &str, units: usize) -> &str {
    let mut n = 0;
    for (i, c) in text.char_indices().rev() {
        n += c.len_utf16();
        if n > units {
            return &text[i + c.len_utf8()..];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::testing::{Convo, lines, replay_spec, text};

    #[test]
    fn the_response_estimate_counts_json_escapes() {
        // name 4 + 13 + 8 = 25 → 6.
        assert_eq!(response_tokens("read", "abcdefgh"), 6);
        // A newline and a quote are escaped to two units each: 4 + 13 + 6 = 23 → 5.
        assert_eq!(response_tokens("read", "a\n\"b"), 5);
        assert_eq!(json_escaped_utf16("\u{1}😀"), 6 + 2);
        // Against JSON.stringify's rules char by char, on every escape and every char width.
        let by_chars = |text: &str| -> u64 {
            text.chars()
                .map(|c| match c {
                    '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
                    c if (c as u32) < 0x20 => 6,
                    c => c.len_utf16() as u64,
                })
                .sum()
        };
        let every_ascii: String = (0u8..0x80).map(char::from).collect();
        for text in [every_ascii.as_str(), "é\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}", "a\"b\\c\u{1f}😀\t"]
        {
            assert_eq!(json_escaped_utf16(text), by_chars(text), "{text:?}");
        }
    }

    #[test]
    fn masks_outputs_past_the_protection_window_once_enough_is_prunable() {
        // Outputs of 4,000 x's: (4 + 13 + 4,000) / 4 = 1,004 tokens each. protect=2,500,
        // minimum=2,000.
        let c = Convo::new().user("go").request().steps(6, "read", 4_000);
        let r = replay_spec(c, "gemini:protect=2500,minimum=2000");
        // Result k enters with request k + 1, so before request 4 the history holds results 0-2;
        // newest first: 2 (total 1,004), 1 (2,008), 0 (3,012 > 2,500: the crossing one is
        // prunable), and 1,004 prunable < 2,000: nothing.
        assert!(r.cleared_before(4).is_empty());
        // Before request 5: 3, 2 protected (2,008); 1 crosses (3,012) → 1 and 0 prunable: 2,008.
        assert_eq!(r.cleared_before(5), [0, 1]);
        let snippet = r.replacement(5, 0).unwrap();
        assert!(snippet.starts_with("<tool_output_masked>\n{\n  \"output\": \"xxxx"), "{snippet}");
        assert!(snippet.contains("xxx\n... [TRUNCATED] ...\nxxx"), "{snippet}");
        assert!(snippet.ends_with(
            "xxxx\"\n}\n\nOutput too large. Full output available at: \
             /home/user/.gemini/history/5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592/tool-outputs/read_c0_xxxxxx.txt\n</tool_output_masked>"
        ), "{snippet}");
        // The snippet is sent and counted as a placeholder.
        assert_eq!(r.run.rows[5].categories.placeholders, 2 * snippet.len() as u64);
        // Masked outputs are skipped afterwards: before request 6, 4 and 3 are protected, 2 is
        // the crossing one, alone 1,004 < 2,000.
        assert!(r.cleared_before(6).is_empty());
    }

    #[test]
    fn exempt_outputs_are_neither_masked_nor_counted_towards_the_minimum() {
        // Result 0 (4,000 chars) is passed over: an `ask_user` output, or one that quotes the tag.
        // Results 1-5 are reads of 1,004 tokens each; result k enters with request k + 1.
        // protect=2,500, minimum=2,000.
        let quoting = format!("{MASK_TAG}>{}", text(3_980));
        for (tool, output) in [("ask_user", text(4_000)), ("read", quoting)] {
            let convo = || {
                Convo::new().user("go").request().tool(tool, output.clone()).request().steps(5, "read", 4_000)
            };
            let r = replay_spec(convo(), "gemini:protect=2500,minimum=2000");
            // Before request 5: 3 and 2 are protected (2,008), 1 crosses (3,012): 1,004 prunable,
            // under the minimum, where counting 0 would make 2,009 and mask 0 and 1.
            assert!(r.cleared_before(5).is_empty(), "{tool}");
            // Before request 6: 4, 3 protected, 2 crosses: 2 and 1 prunable (2,008); 0 stays.
            assert_eq!(r.cleared_before(6), [1, 2], "{tool}");
            assert!(r.edits.iter().flatten().all(|e| !matches!(e, Edit::Replace(0, _))), "{tool}");
        }
        // With no exempt tools, `ask_user` is counted and masked as any other output.
        let c =
            Convo::new().user("go").request().tool("ask_user", text(4_000)).request().steps(5, "read", 4_000);
        let r = replay_spec(c, "gemini:protect=2500,minimum=2000,exempt_tools=");
        assert_eq!(r.cleared_before(5), [0, 1]);
    }

    #[test]
    fn exempt_outputs_do_not_fill_the_protected_window() {
        // Three reads of 1,004 tokens, then an 8,000-char `enter_plan_mode` output (2,007).
        // protect=2,500, minimum=1.
        let convo = || {
            Convo::new()
                .user("go")
                .request()
                .steps(3, "read", 4_000)
                .tool("enter_plan_mode", text(8_000))
                .request()
                .user("next")
                .request()
        };
        let r = replay_spec(convo(), "gemini:protect=2500,minimum=1");
        // Before request 4: 2, 1 protected, 0 crosses and is masked.
        assert_eq!(r.cleared_before(4), [0]);
        // Before request 5 the exempt output is passed over: 2, 1 still fit the window.
        assert!(r.cleared_before(5).is_empty());
        // Counted, it alone nearly fills the window: 2 crosses, 2 and 1 are masked.
        let r = replay_spec(convo(), "gemini:protect=2500,minimum=1,exempt_tools=ask_user");
        assert_eq!(r.cleared_before(4), [0]);
        assert_eq!(r.cleared_before(5), [1, 2]);
    }

    #[test]
    fn the_general_preview_keeps_250_units_each_side_of_the_json() {
        let p = general_preview(&"é".repeat(600));
        let (head, tail) = p.split_once("\n... [TRUNCATED] ...\n").unwrap();
        assert_eq!(head.encode_utf16().count(), 250);
        assert!(head.starts_with("{\n  \"output\": \"éé"));
        assert_eq!(tail.encode_utf16().count(), 250);
        assert!(tail.ends_with("éé\"\n}"));
        // Short outputs are kept whole.
        assert_eq!(general_preview("ok"), "{\n  \"output\": \"ok\"\n}");
    }

    /// The preview as first written: the whole output escaped, then cut.
    fn general_preview_of_the_whole_json(text: &str) -> String {
        let json = format!("{{\n  \"output\": {}\n}}", serde_json::Value::from(text));
        if json.encode_utf16().count() <= 500 {
            return json;
        }
        format!("{}\n... [TRUNCATED] ...\n{}", utf16_head(&json, 250), utf16_tail(&json, 250))
    }

    #[test]
    fn the_general_preview_escapes_only_the_ends_and_gives_the_same_text() {
        let pieces = ["a", "é", "😀", "\n", "\"", "\\", "\u{1}", "\t", "\u{7f}", "\u{2028}", "日本"];
        let mut cases: Vec<String> = Vec::new();
        for n in [0, 1, 100, 237, 238, 239, 240, 241, 249, 250, 251, 480, 485, 486, 487, 499, 500, 501, 2000]
        {
            for piece in pieces {
                cases.push(piece.repeat(n));
            }
            // Mixed: every piece in turn, so escapes and wide chars fall across both cuts.
            cases.push(pieces.iter().cycle().take(n).copied().collect());
        }
        for text in &cases {
            assert_eq!(general_preview(text), general_preview_of_the_whole_json(text), "{text:?}");
        }
    }

    #[test]
    fn the_shell_preview_cuts_the_output_section_to_ten_lines_each_side() {
        let out = format!(
            "Command: make\nDirectory: (root)\nOutput: {}\nError: (none)\nExit Code: 2",
            lines(30, 3)
        );
        let p = shell_preview(&out);
        let expected = format!(
            "Command: make\nDirectory: (root)\nOutput: {}\n\n... [10 lines omitted] ...\n\n{}\nError: (none)\nExit Code: 2",
            lines(10, 3),
            lines(10, 3)
        );
        assert_eq!(p, expected);
        // Not in shell.ts's format: plain head/tail lines.
        assert_eq!(shell_preview("a\nb"), "a\nb");
    }

    #[test]
    fn a_shell_tool_is_masked_with_its_shell_preview() {
        // Escaped as JSON the output is 8 + 4,000 + 39 × 2 + 14 = 4,100 units:
        // (17 + 13 + 4,100) / 4 = 1,032 > protect, so it is the crossing, prunable output.
        let out = format!("Output: {}\nExit Code: 1", lines(40, 100));
        let c = Convo::new()
            .user("go")
            .request()
            .tool("run_shell_command", out)
            .request()
            .tool("read", "ok")
            .request();
        let r = replay_spec(c, "gemini:protect=1000,minimum=1");
        let snippet = r.replacement(2, 0).unwrap();
        assert!(snippet.starts_with("<tool_output_masked>\nOutput: yyyy"), "{snippet}");
        assert!(snippet.contains("\n\n... [20 lines omitted] ...\n\n"), "{snippet}");
        assert!(snippet.contains("\nExit Code: 1\n\nOutput too large."), "{snippet}");
        assert!(snippet.contains("/run_shell_command_c0_xxxxxx.txt"), "{snippet}");
    }

    #[test]
    fn text_estimate_weighs_non_ascii_more() {
        // 1,000 kana: the response estimate is (4 + 13 + 1,000) / 4 = 254, the text heuristic
        // 1,300. With protect=1,000 the output crosses the window only under the text estimate.
        let convo = || {
            Convo::new()
                .user("go")
                .request()
                .tool("read", "あ".repeat(1_000))
                .request()
                .tool("read", text(40))
                .request()
        };
        let response = replay_spec(convo(), "gemini:protect=1000,minimum=1");
        assert!(response.edits.iter().all(Vec::is_empty));
        let r = replay_spec(convo(), "gemini:protect=1000,minimum=1,estimate=text");
        assert_eq!(r.cleared_before(2), [0]);
    }
}
