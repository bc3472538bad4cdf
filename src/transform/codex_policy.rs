//! `truncate:codex-policy` — newer Codex CLI's truncation of a tool output by its per-model
//! `TruncationPolicy`: a cut in the middle of the output, with no line budget.
//!
//! Source: `openai/codex`, `codex-rs/core/src/truncate.rs` (`TruncationPolicy::{Bytes, Tokens}`,
//! `byte_budget`, `formatted_truncate_text`, `truncate_text`) and
//! `codex-rs/utils/string/src/truncate.rs` (`truncate_middle_chars`,
//! `truncate_middle_with_token_budget`, `split_string`, `split_budget`, `approx_bytes_for_tokens`,
//! `approx_tokens_from_byte_count`). ANCHORS.md §4: each model family names its policy,
//! `Bytes(10_000)` or `Tokens(10_000)`, and `tool_output_token_limit` overrides the limit.
//!
//! The budget is `limit` bytes (`mode=bytes`) or `4 × limit` bytes (`mode=tokens`, Codex's 4 bytes
//! per token). An output of at most the budget is kept. A longer one becomes
//! `Total output lines: {M}\n\n` + its first `budget / 2` bytes + a marker + its last
//! `budget − budget / 2` bytes, the first cut down and the second up to a char boundary; the
//! marker is `…{N} tokens truncated…` with `N = ⌈(bytes − budget) / 4⌉`, or `…{N} chars
//! truncated…` with `N` the chars actually cut out. Header and marker are not counted in the
//! budget (as in Codex). The default, `Tokens(10_000)`, is what the Codex 0.128 rollout of the
//! corpus (`codex-cli/codemie-code/`) records: its three cut outputs carry
//! `Total output lines: M`, 20,000 bytes each side and `…{original tokens − 10000} tokens
//! truncated…` (`tests/it/corpus_cli_formats.rs` rebuilds one and cuts it again to the same
//! bytes).
//!
//! **Decision on outputs Codex already cut.** A rollout holds outputs as Codex sent them, so its
//! long ones are cut already. An output that carries this mode's header and marker with no more
//! than the budget kept is left as it is: Codex does not cut an output twice (it checks,
//! `debug_panic_on_double_truncation`), and the transform so changes nothing it produced itself.
//! What Codex puts before the output in the same text (the unified exec header, `Chunk ID: …` to
//! `Output:`, 106–107 bytes in the corpus) is counted in the budget of an output not cut yet, as
//! the transform cannot tell it apart from the output; at the default budget no output of the
//! corpus is near enough to the limit for that to matter. Before a cut, at most
//! `MAX_BEFORE_HEADER` bytes may come: a header further in is text the output itself holds (a
//! `cat` of a rollout), and the output is cut as any other, so no amount of text before it
//! escapes the budget.

use super::codex::{take_bytes_at_char_boundary, take_last_bytes_at_char_boundary};
use super::{Transform, TransformKind};
use crate::model::Output;
use crate::spec::{Param, builder};

/// Bytes per token in Codex's estimates (`APPROX_BYTES_PER_TOKEN`).
const BYTES_PER_TOKEN: usize = 4;

/// The `truncate:codex-policy` transform.
pub const KIND: TransformKind = TransformKind {
    name: "truncate:codex-policy",
    about: "newer Codex CLI (TruncationPolicy): outputs over the budget keep the first and the last \
            half of the budget around `…N tokens truncated…` (or `…N chars truncated…`) under \
            `Total output lines: M`; no line budget",
    source: "openai/codex codex-rs/core/src/truncate.rs formatted_truncate_text, codex-rs/utils/string \
             truncate_middle_with_token_budget / truncate_middle_chars (ANCHORS.md §4)",
    params: &[
        Param {
            key: "mode",
            default: "tokens",
            about: "`tokens` (TruncationPolicy::Tokens: the budget is 4 bytes per token) or `bytes`",
        },
        Param { key: "limit", default: "10000", about: "the policy's limit, in tokens or bytes" },
    ],
    build: |p| {
        let CodexPolicyParams { mode, limit } = p.typed()?;
        let tokens = mode == Mode::Tokens;
        let budget = if tokens { limit.saturating_mul(BYTES_PER_TOKEN) } else { limit };
        let spec = p.spec().to_owned();
        Ok(builder(move || {
            Box::new(CodexPolicy { spec: spec.clone(), tokens, budget }) as Box<dyn Transform>
        }))
    },
};

/// The parameters of `truncate:codex-policy` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct CodexPolicyParams {
    pub mode: Mode,
    pub limit: usize,
}

/// The unit of `truncate:codex-policy`'s limit (`mode=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Tokens (4 bytes each).
    Tokens,
    /// Bytes.
    Bytes,
}

/// Codex's truncation by `TruncationPolicy`.
pub struct CodexPolicy {
    spec: String,
    /// `TruncationPolicy::Tokens` (else `Bytes`).
    tokens: bool,
    /// The byte budget (`byte_budget`).
    budget: usize,
}

impl Transform for CodexPolicy {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn apply(&self, output: &str, _tool: Option<&str>) -> Option<Output> {
        if output.len() <= self.budget || self.already_cut(output) {
            return None;
        }
        let left = self.budget / 2;
        let right = self.budget - left;
        let prefix = take_bytes_at_char_boundary(output, left);
        let suffix = take_last_bytes_at_char_boundary(output, right);
        let removed = if self.tokens {
            (output.len() - self.budget).div_ceil(BYTES_PER_TOKEN)
        } else {
            output[prefix.len()..output.len() - suffix.len()].chars().count()
        };
        let output = format!(
            "Total output lines: {}\n\n{prefix}{}{suffix}",
            output.lines().count(),
            self.marker(removed)
        );
        Some(Output::Raw { output })
    }
}

impl CodexPolicy {
    /// `format_truncation_marker`.
    fn marker(&self, removed: usize) -> String {
        format!("…{removed} {} truncated…", self.unit())
    }

    fn unit(&self) -> &'static str {
        if self.tokens { "tokens" } else { "chars" }
    }

    /// Whether `output` holds this mode's cut already: a `Total output lines: M` header line and a
    /// blank line, then a marker of this unit, and no more than the budget besides.
    fn already_cut(&self, output: &str) -> bool {
        let Some(body) = after_header(output) else { return false };
        let ending = format!(" {} truncated…", self.unit());
        body.match_indices(&ending).any(|(at, _)| {
            let digits = body[..at].bytes().rev().take_while(u8::is_ascii_digit).count();
            let start = at - digits;
            let marker_len = ending.len() + digits + '…'.len_utf8();
            digits > 0 && body[..start].ends_with('…') && body.len() - marker_len <= self.budget
        })
    }
}

/// At most this many bytes come before the header of an output Codex cut: its unified exec header
/// (`Chunk ID: …` to `Output:`) is about 100.
const MAX_BEFORE_HEADER: usize = 1024;

/// The text after the first `Total output lines: {digits}\n\n` that starts a line within
/// [`MAX_BEFORE_HEADER`] bytes of the start.
fn after_header(output: &str) -> Option<&str> {
    const HEADER: &str = "Total output lines: ";
    output.match_indices(HEADER).take_while(|(at, _)| *at <= MAX_BEFORE_HEADER).find_map(|(at, _)| {
        if at > 0 && !output[..at].ends_with('\n') {
            return None;
        }
        let rest = &output[at + HEADER.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest[digits..].strip_prefix("\n\n")
    })
}

#[cfg(test)]
mod tests {
    use crate::transform::{ApplyText, parse};

    #[test]
    fn outputs_within_the_budget_are_kept() {
        let t = parse("truncate:codex-policy").unwrap();
        assert_eq!(t.apply_text(&"x".repeat(40_000), None), None);
        assert_eq!(t.apply_text(&"x\n".repeat(20_000), None), None, "no line budget");
        let t = parse("truncate:codex-policy:mode=bytes").unwrap();
        assert_eq!(t.apply_text(&"x".repeat(10_000), None), None);
    }

    #[test]
    fn a_long_output_keeps_half_the_budget_each_side_around_the_token_marker() {
        // Tokens(10_000): 40,000 bytes. 40,663 bytes in 3 lines: ⌈663 / 4⌉ = 166 tokens cut.
        let t = parse("truncate:codex-policy").unwrap();
        let input = format!("{}\n{}\n{}\n", "a".repeat(20_100), "b".repeat(300), "c".repeat(20_260));
        assert_eq!(input.len(), 40_663);
        let out = t.apply_text(&input, None).unwrap();
        let expected = format!(
            "Total output lines: 3\n\n{}…166 tokens truncated…{}",
            "a".repeat(20_000),
            &input[input.len() - 20_000..]
        );
        assert_eq!(out, expected);
        assert!(out.ends_with("cc\n"));
    }

    #[test]
    fn the_examples_of_codex_own_tests_cut_alike() {
        // `truncate.rs` tests: Tokens(5) and Bytes(30) of one line, Tokens(10) of two.
        let one = "this is an example of a long output that should be truncated";
        let two = "this is an example of a long output that should be truncated\nalso some other line";
        let cut = |spec: &str, s: &str| parse(spec).unwrap().apply_text(s, None).unwrap();
        assert_eq!(
            cut("truncate:codex-policy:limit=5", one),
            "Total output lines: 1\n\nthis is an…10 tokens truncated… truncated"
        );
        assert_eq!(
            cut("truncate:codex-policy:mode=bytes,limit=30", one),
            "Total output lines: 1\n\nthis is an exam…30 chars truncated…ld be truncated"
        );
        assert_eq!(
            cut("truncate:codex-policy:limit=10", two),
            "Total output lines: 2\n\nthis is an example o…11 tokens truncated…also some other line"
        );
        assert_eq!(
            cut("truncate:codex-policy:mode=bytes,limit=30", two),
            "Total output lines: 2\n\nthis is an exam…51 chars truncated…some other line"
        );
    }

    #[test]
    fn cuts_fall_on_char_boundaries_and_count_the_chars_cut_out() {
        // 10 emoji (40 bytes) + 22 ASCII: Bytes(20) keeps 😀😀 (8 of 10 bytes) and the last 10.
        let s = "😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n";
        let out = parse("truncate:codex-policy:mode=bytes,limit=20").unwrap().apply_text(s, None).unwrap();
        assert_eq!(out, "Total output lines: 2\n\n😀😀…21 chars truncated…with text\n");
        let out = parse("truncate:codex-policy:limit=8").unwrap().apply_text(s, None).unwrap();
        assert_eq!(out, "Total output lines: 2\n\n😀😀😀😀…8 tokens truncated… line with text\n");
        // A zero limit keeps the header and the marker only.
        let out = parse("truncate:codex-policy:limit=0").unwrap().apply_text("abcdef", None).unwrap();
        assert_eq!(out, "Total output lines: 1\n\n…2 tokens truncated…");
    }

    #[test]
    fn an_output_codex_already_cut_is_not_cut_again() {
        let t = parse("truncate:codex-policy:limit=100").unwrap();
        let input = format!("{}\n{}", "x".repeat(300), "y".repeat(300));
        let once = t.apply_text(&input, None).unwrap();
        assert_eq!(t.apply_text(&once, None), None, "its own cut");
        // As a rollout records it, behind the unified exec header.
        let recorded = format!("Chunk ID: 50ae86\nOriginal token count: 151\nOutput:\n{once}");
        assert_eq!(t.apply_text(&recorded, None), None);
        // A smaller budget, or the other unit, cuts it again.
        assert!(parse("truncate:codex-policy:limit=50").unwrap().apply_text(&once, None).is_some());
        assert!(
            parse("truncate:codex-policy:mode=bytes,limit=400").unwrap().apply_text(&once, None).is_some()
        );
        // A header that does not start a line, or a marker with no count, is not a cut.
        let t = parse("truncate:codex-policy:limit=10").unwrap();
        assert!(t.apply_text("see Total output lines: 3\n\nab… tokens truncated…cd", None).is_some());
        assert!(t.apply_text("Total output lines: 3\n\nab…x tokens truncated…cd", None).is_some());
    }

    #[test]
    fn a_cut_far_into_the_output_does_not_keep_the_text_before_it_whole() {
        // A `cat` of a log that holds a Codex cut near its end: the cut is the output's own text.
        let t = parse("truncate:codex-policy:limit=100").unwrap();
        let input = format!("{}\nTotal output lines: 3\n\nab…10 tokens truncated…cd", "x".repeat(50_000));
        let out = t.apply_text(&input, None).expect("cut");
        assert!(out.len() < 500, "{} bytes kept", out.len());
    }

    #[test]
    fn bad_modes_are_errors() {
        let e = parse("truncate:codex-policy:mode=lines").err().unwrap().to_string();
        assert!(e.contains("expected tokens or bytes"), "{e}");
    }
}
