//! The seed's automatic split of a tool output into `summary` and `content`, reproduced byte for byte.
//!
//! [`ToolOutput::with_threshold`] is the seed's `impl From<String> for ToolOutput` with the
//! threshold as a parameter instead of the `SUMMARY_THRESHOLD` constant, and `From<String>` itself
//! splits at [`SUMMARY_THRESHOLD`]: at most `threshold` UTF-8 bytes stay whole as the summary
//! (never prunable); anything longer becomes
//! `"{lines} lines | {first 80 chars of the first line}…"` with the whole output as content.
//! `lines` and the first line follow `str::lines` (a trailing newline ends the last line, `\r\n` is a
//! line ending, a lone `\r` is not). The 80 is in `char`s, the threshold in bytes, and the ellipsis
//! is U+2026. Nothing here counts tokens or knows about policies.

use crate::model::Output;

/// Longest first-line excerpt kept in an automatic summary, in `char`s.
pub const FIRST_LINE_CHARS: usize = 80;

/// The threshold `From<String>` splits at, in UTF-8 bytes: the command line's default `--threshold`
/// (the seed leaves the value to tuning, "a few hundred bytes").
pub const SUMMARY_THRESHOLD: usize = 256;

/// The seed's `ToolOutput`: a summary that survives prune and content that prune removes.
///
/// ```
/// use ctxbudget::ToolOutput;
///
/// // At most `SUMMARY_THRESHOLD` bytes: the output is its own summary, nothing to prune.
/// let small: ToolOutput = String::from("bash: cargo test — exit 0, 3 passed").into();
/// assert_eq!(small.summary, "bash: cargo test — exit 0, 3 passed");
/// assert_eq!(small.content, None);
///
/// // Longer: a line count and the first line's first 80 chars, the whole output as content.
/// let big = format!("{}\n{}", "x".repeat(100), "y".repeat(300));
/// let split = ToolOutput::from(big.clone());
/// assert_eq!(split.summary, format!("2 lines | {}…", "x".repeat(80)));
/// assert_eq!(split.content, Some(big));
///
/// // The same rule at another threshold (bytes).
/// let whole = ToolOutput::with_threshold("x".repeat(1000), 1024);
/// assert_eq!(whole.content, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// 1–2 lines, always sent.
    pub summary: String,
    /// Detail, `None` when the summary alone suffices (or after a prune).
    pub content: Option<String>,
}

impl From<String> for ToolOutput {
    /// The seed's automatic split at [`SUMMARY_THRESHOLD`].
    fn from(s: String) -> ToolOutput {
        ToolOutput::with_threshold(s, SUMMARY_THRESHOLD)
    }
}

impl ToolOutput {
    /// The seed's `From<String>` with `SUMMARY_THRESHOLD = threshold` (bytes), taking the output
    /// without copying it.
    ///
    /// ```
    /// use ctxbudget::ToolOutput;
    ///
    /// let out = ToolOutput::with_threshold("first\nsecond\n", 4);
    /// assert_eq!(out.summary, "2 lines | first…");
    /// assert_eq!(out.content.as_deref(), Some("first\nsecond\n"));
    /// ```
    pub fn with_threshold(s: impl Into<String>, threshold: usize) -> ToolOutput {
        let s = s.into();
        if s.len() <= threshold {
            ToolOutput { summary: s, content: None }
        } else {
            ToolOutput { summary: summary_of(&s), content: Some(s) }
        }
    }

    /// The seed's `From<String>` with `SUMMARY_THRESHOLD = threshold` (bytes), for a borrowed output.
    pub fn from_output(s: &str, threshold: usize) -> ToolOutput {
        ToolOutput::with_threshold(s, threshold)
    }

    /// Splits a recorded output. Raw outputs go through [`ToolOutput::from_output`]; outputs that a
    /// tool already split are kept as written unless `resplit`, which re-splits their full text.
    pub fn from_recorded(output: &Output, threshold: usize, resplit: bool) -> ToolOutput {
        match output {
            Output::Raw { output } => ToolOutput::from_output(output, threshold),
            Output::Split { .. } if resplit => ToolOutput::from_output(&output.full_text(), threshold),
            Output::Split { summary, content } => {
                ToolOutput { summary: summary.clone(), content: content.clone() }
            }
        }
    }

    /// The text sent to the LLM: `"{summary}\n{content}"` with content, else the summary alone.
    pub fn sent_text(&self) -> String {
        match &self.content {
            Some(c) => format!("{}\n{c}", self.summary),
            None => self.summary.clone(),
        }
    }
}

/// Whether `s` would be split at `threshold` (it is longer than the threshold in bytes).
pub fn is_split(s: &str, threshold: usize) -> bool {
    s.len() > threshold
}

/// The automatic summary of an output that is split: line count and the cut first line.
pub fn summary_of(s: &str) -> String {
    summary_with_lines(s, s.lines().count())
}

/// [`summary_of`] `s` whose lines (`s.lines().count()`) a caller has counted already.
pub fn summary_with_lines(s: &str, lines: usize) -> String {
    let first_line: String = s.lines().next().unwrap_or("").chars().take(FIRST_LINE_CHARS).collect();
    format!("{lines} lines | {first_line}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's code, verbatim but for the constant, as the oracle for the tests below.
    fn seed_from_string(s: String, summary_threshold: usize) -> ToolOutput {
        if s.len() <= summary_threshold {
            ToolOutput { summary: s, content: None }
        } else {
            let lines = s.lines().count();
            let first_line: String = s.lines().next().unwrap_or("").chars().take(80).collect();
            let summary = format!("{lines} lines | {first_line}…");
            ToolOutput { summary, content: Some(s) }
        }
    }

    fn check(s: &str, threshold: usize) -> ToolOutput {
        let ours = ToolOutput::from_output(s, threshold);
        assert_eq!(ours, seed_from_string(s.to_owned(), threshold), "input {s:?} at {threshold}");
        ours
    }

    #[test]
    fn exactly_threshold_bytes_stays_whole() {
        let s = "a".repeat(256);
        let out = check(&s, 256);
        assert_eq!(out.summary, s);
        assert_eq!(out.content, None);
    }

    #[test]
    fn one_byte_over_the_threshold_is_split() {
        let s = "a".repeat(257);
        let out = check(&s, 256);
        assert_eq!(out.summary, format!("1 lines | {}…", "a".repeat(80)));
        assert_eq!(out.content.as_deref(), Some(s.as_str()));
    }

    #[test]
    fn threshold_counts_bytes_not_chars() {
        // 100 chars of 3 bytes each = 300 bytes: over a 256-byte threshold although only 100 chars.
        let s = "あ".repeat(100);
        assert!(check(&s, 256).content.is_some());
        assert!(check(&s, 300).content.is_none());
    }

    #[test]
    fn japanese_first_line_is_cut_at_80_chars_not_bytes() {
        let first = "日本語のログ行".repeat(20); // 140 chars, 420 bytes
        let s = format!("{first}\n二行目\n");
        let out = check(&s, 16);
        let expected_cut: String = first.chars().take(80).collect();
        assert_eq!(out.summary, format!("2 lines | {expected_cut}…"));
        assert_eq!(expected_cut.chars().count(), 80);
        assert_eq!(expected_cut.len(), 240);
    }

    #[test]
    fn empty_string_is_a_summary_even_at_threshold_zero() {
        assert_eq!(check("", 0), ToolOutput { summary: String::new(), content: None });
        assert_eq!(check("", 256).content, None);
    }

    #[test]
    fn only_newlines_count_as_empty_lines() {
        let out = check("\n\n\n", 0);
        assert_eq!(out.summary, "3 lines | …");
        assert_eq!(out.content.as_deref(), Some("\n\n\n"));
    }

    #[test]
    fn crlf_ends_a_line_and_is_not_part_of_the_first_line() {
        let out = check("first\r\nsecond\r\n", 4);
        assert_eq!(out.summary, "2 lines | first…");
    }

    #[test]
    fn lone_carriage_return_is_kept_in_the_first_line() {
        let out = check("a\rb\nc", 1);
        assert_eq!(out.summary, "2 lines | a\rb…");
    }

    #[test]
    fn no_trailing_newline_still_counts_the_last_line() {
        assert_eq!(check("one\ntwo", 3).summary, "2 lines | one…");
        assert_eq!(check("one\ntwo\n", 3).summary, "2 lines | one…");
    }

    #[test]
    fn empty_first_line_gives_an_empty_excerpt() {
        assert_eq!(check("\nsecond line", 3).summary, "2 lines | …");
    }

    #[test]
    fn pre_split_outputs_are_kept_unless_resplit() {
        let rec =
            Output::Split { summary: "read_file: a.rs — 3 lines".into(), content: Some("x\ny\nz".into()) };
        let kept = ToolOutput::from_recorded(&rec, 0, false);
        assert_eq!(kept.summary, "read_file: a.rs — 3 lines");
        let resplit = ToolOutput::from_recorded(&rec, 0, true);
        assert_eq!(resplit.summary, "4 lines | read_file: a.rs — 3 lines…");
        assert_eq!(resplit.content.as_deref(), Some("read_file: a.rs — 3 lines\nx\ny\nz"));
    }

    #[test]
    fn from_string_splits_at_the_default_threshold() {
        for len in [0, SUMMARY_THRESHOLD, SUMMARY_THRESHOLD + 1, 4 * SUMMARY_THRESHOLD] {
            let s = format!("{}\n", "é".repeat(len / 2));
            assert_eq!(ToolOutput::from(s.clone()), seed_from_string(s.clone(), SUMMARY_THRESHOLD));
            assert_eq!(ToolOutput::with_threshold(s.as_str(), 7), seed_from_string(s, 7));
        }
    }

    #[test]
    fn sent_text_is_summary_newline_content() {
        let out = ToolOutput::from_output("abc\ndef", 2);
        assert_eq!(out.sent_text(), "2 lines | abc…\nabc\ndef");
        assert_eq!(ToolOutput::from_output("ab", 2).sent_text(), "ab");
    }
}
