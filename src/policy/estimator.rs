//! The token estimates the anchors decide with, computed from a [`TextSize`] without the text.
//!
//! Each shipped prune mechanism counts in its own way, and its thresholds only mean what they
//! mean under its own count. A [`TextSize`] carries bytes and real tokens ([`crate::tokens::Measure`])
//! and, beside them, the chars, non-ASCII chars and UTF-16 units these estimators read
//! ([`crate::tokens::CharCounts`]), which is enough to reproduce every estimator below exactly for one text (policies
//! apply them per text, as the anchors do; applied to a sum they are the same formula on the sum).
//! `--decide-with` chooses between these ([`crate::tokens::DecideWith::Anchor`]), the report's
//! tokenizer (`real`) or a fixed counter; [`super::View::tokens`] resolves the choice. Pure
//! arithmetic: no I/O.

use crate::measure::CacheSlot;
use crate::model::Tokens;
use crate::tokens::TextSize;

/// SWE-agent's placeholder: the Python line count of an output
/// ([`super::swe_agent::python_line_count`]).
pub const PYTHON_LINES: CacheSlot = CacheSlot::new(0);
/// Gemini CLI's estimate of a tool output: its UTF-16 length as a JSON string body
/// ([`super::gemini::json_escaped_utf16`]).
pub const JSON_ESCAPED_UNITS: CacheSlot = CacheSlot::new(1);

/// An anchor's token estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Estimator {
    /// The seed's framework: `len / 4` in UTF-8 bytes, rounded down per text
    /// (`content.len() / 4`, SEED.md "Prune").
    Seed,
    /// opencode `packages/opencode/src/util/token.ts`: `Math.round(length / 4)`, where `length` is
    /// the JavaScript string length (UTF-16 units), rounded half up per text.
    OpenCode,
    /// LangChain `count_tokens_approximately` (langchain_core `messages/utils.py`):
    /// `ceil(len(text) / 4)` with Python's `len` (code points), for one text. The policy adds
    /// the per-message parts (role, ids, tool calls, `+ 3`) and rounds per message.
    LangChain,
    /// Gemini CLI `packages/core/src/utils/tokenCalculation.ts` `estimateTextTokens`: 0.25 per
    /// UTF-16 unit up to 127, 1.3 per other unit, `length / 4` above 100,000 units, rounded down.
    GeminiText,
    /// The provider's own count (Anthropic's server-side tokenizer, which ctxbudget does not
    /// have): the report's tokenizer stands in for it.
    Real,
}

/// Above this many UTF-16 units Gemini CLI switches to `length / 4`.
const GEMINI_FULL_HEURISTIC_MAX: u64 = 100_000;

impl Estimator {
    /// Tokens of the text measured by `m`.
    pub fn tokens(self, m: &TextSize) -> Tokens {
        match self {
            Estimator::Seed => m.estimate,
            Estimator::OpenCode => (m.chars.utf16 + 2) / 4,
            Estimator::LangChain => m.chars.chars.div_ceil(4),
            Estimator::GeminiText => {
                if m.chars.utf16 > GEMINI_FULL_HEURISTIC_MAX {
                    m.chars.utf16 / 4
                } else {
                    // Every non-ASCII char is one or two UTF-16 units above 127.
                    let ascii = m.chars.chars - m.chars.non_ascii;
                    let other_units = m.chars.utf16 - ascii;
                    (25 * ascii + 130 * other_units) / 100
                }
            }
            Estimator::Real => m.tokens,
        }
    }

    /// A short name, for listings.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::Seed => "len/4 (UTF-8 bytes, per text)",
            Estimator::OpenCode => "round(length/4) (UTF-16 units)",
            Estimator::LangChain => "ceil(chars/4) + 3 per message (role, ids, tool calls)",
            Estimator::GeminiText => "0.25/ASCII char + 1.3/other char",
            Estimator::Real => "the report's tokenizer",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::{Meter, Tokenizer};

    fn m(text: &str) -> TextSize {
        Meter::new(Tokenizer::Estimate, Tokenizer::Estimate).measure(text)
    }

    #[test]
    fn seed_is_bytes_over_four_rounded_down() {
        assert_eq!(Estimator::Seed.tokens(&m("abcdefg")), 1);
        assert_eq!(Estimator::Seed.tokens(&m("ああ")), 1); // 6 bytes
    }

    #[test]
    fn opencode_rounds_half_up_on_utf16_length() {
        // Math.round(5/4 = 1.25) = 1, Math.round(6/4 = 1.5) = 2, Math.round(7/4) = 2.
        assert_eq!(Estimator::OpenCode.tokens(&m("abcde")), 1);
        assert_eq!(Estimator::OpenCode.tokens(&m("abcdef")), 2);
        assert_eq!(Estimator::OpenCode.tokens(&m("abcdefg")), 2);
        // "😀😀" is 4 UTF-16 units (8 bytes, 2 chars): round(1.0) = 1.
        assert_eq!(Estimator::OpenCode.tokens(&m("😀😀")), 1);
    }

    #[test]
    fn langchain_rounds_code_points_up() {
        assert_eq!(Estimator::LangChain.tokens(&m("abcde")), 2);
        assert_eq!(Estimator::LangChain.tokens(&m("abcd")), 1);
        assert_eq!(Estimator::LangChain.tokens(&m("あ")), 1);
        assert_eq!(Estimator::LangChain.tokens(&m("")), 0);
    }

    #[test]
    fn gemini_weighs_ascii_and_other_utf16_units() {
        // 8 ASCII chars: 8 × 0.25 = 2.
        assert_eq!(Estimator::GeminiText.tokens(&m("abcdefgh")), 2);
        // 2 ASCII + 3 kana: 0.5 + 3.9 = 4.4 → 4.
        assert_eq!(Estimator::GeminiText.tokens(&m("abあいう")), 4);
        // An emoji is two UTF-16 units above 127: 2.6 → 2.
        assert_eq!(Estimator::GeminiText.tokens(&m("😀")), 2);
        // Above 100,000 units: length / 4.
        let long = "あ".repeat(100_001);
        assert_eq!(Estimator::GeminiText.tokens(&m(&long)), 25_000);
    }

    #[test]
    fn real_is_the_report_tokenizer() {
        let meter = Meter::new(Tokenizer::O200k, Tokenizer::Estimate);
        assert_eq!(Estimator::Real.tokens(&meter.measure("hello world")), 2);
    }
}
