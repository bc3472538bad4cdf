//! `truncate:codex` — OpenAI Codex CLI's head+tail truncation of a tool output at record time.
//!
//! Source: `openai/codex`, `codex-rs/core/src/tools/mod.rs` (`MODEL_FORMAT_MAX_BYTES = 10 * 1024`,
//! `MODEL_FORMAT_MAX_LINES = 256`, head lines = max / 2, tail lines = the rest, head bytes = max
//! bytes / 2; `format_exec_output`, `truncate_formatted_exec_output`) and
//! `codex-rs/utils/string` (`take_bytes_at_char_boundary`, `take_last_bytes_at_char_boundary`).
//! ANCHORS.md §4. Clients still see the full stream; only what the model gets is cut.
//!
//! An output of at most 10 KiB and 256 lines (`str::lines`) is kept. Otherwise it becomes
//! `Total output lines: {M}\n\n` + the first 128 lines (`split_inclusive('\n')` segments) cut to
//! 5 KiB + `\n[... omitted {N} of {M} lines ...]\n\n` + the last 128 lines cut to what is left of
//! the 10 KiB, both cuts on char boundaries. Newer Codex versions size the budget per model
//! (`TruncationPolicy::Bytes(10_000)` or `Tokens(n)` ≈ 4n bytes); `bytes=` and `lines=` set it.

use super::{Transform, TransformKind};
use crate::policy::Param;

/// The `truncate:codex` transform.
pub const KIND: TransformKind = TransformKind {
    name: "truncate:codex",
    about: "Codex CLI: outputs over 10 KiB or 256 lines keep 128 head lines (5 KiB) and 128 tail lines \
            around `[... omitted N of M lines ...]`",
    source: "openai/codex codex-rs/core/src/tools/mod.rs format_exec_output (ANCHORS.md §4)",
    params: &[
        Param {
            key: "bytes",
            default: "10240",
            about: "byte budget (MODEL_FORMAT_MAX_BYTES); half of it for the head",
        },
        Param {
            key: "lines",
            default: "256",
            about: "line budget (MODEL_FORMAT_MAX_LINES); half of it for the head",
        },
    ],
    build: |p| {
        Ok(Box::new(Codex {
            spec: p.spec().to_owned(),
            max_bytes: p.at_least("bytes", 1)?,
            max_lines: p.at_least("lines", 1)?,
        }))
    },
};

/// Codex's record-time truncation.
pub struct Codex {
    spec: String,
    max_bytes: usize,
    max_lines: usize,
}

impl Transform for Codex {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn apply(&self, output: &str, _tool: Option<&str>) -> Option<String> {
        let total_lines = output.lines().count();
        if output.len() <= self.max_bytes && total_lines <= self.max_lines {
            return None;
        }
        Some(format!("Total output lines: {total_lines}\n\n{}", self.truncate(output, total_lines)))
    }
}

impl Codex {
    /// `truncate_formatted_exec_output`.
    fn truncate(&self, content: &str, total_lines: usize) -> String {
        let head_lines = self.max_lines / 2;
        let tail_lines = self.max_lines - head_lines;
        let head_bytes = self.max_bytes / 2;
        let segments: Vec<&str> = content.split_inclusive('\n').collect();
        let head_take = head_lines.min(segments.len());
        let tail_take = tail_lines.min(segments.len().saturating_sub(head_take));
        let omitted = segments.len().saturating_sub(head_take + tail_take);
        let head_end: usize = segments[..head_take].iter().map(|s| s.len()).sum();
        let tail_start =
            content.len() - segments[segments.len() - tail_take..].iter().map(|s| s.len()).sum::<usize>();
        let marker = format!("\n[... omitted {omitted} of {total_lines} lines ...]\n\n");

        let mut head_budget = head_bytes.min(self.max_bytes);
        let tail_budget = self.max_bytes.saturating_sub(head_budget + marker.len());
        if tail_budget == 0 && marker.len() >= self.max_bytes {
            return take_bytes_at_char_boundary(&marker, self.max_bytes).to_owned();
        }
        if tail_budget == 0 {
            head_budget = self.max_bytes.saturating_sub(marker.len());
        }
        let mut result = String::with_capacity(self.max_bytes.min(content.len()));
        result.push_str(take_bytes_at_char_boundary(&content[..head_end], head_budget));
        result.push_str(&marker);
        let remaining = self.max_bytes.saturating_sub(result.len());
        if remaining > 0 {
            result.push_str(take_last_bytes_at_char_boundary(&content[tail_start..], remaining));
        }
        result
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub fn take_bytes_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The longest suffix of `s` of at most `max` bytes that starts on a char boundary.
pub fn take_last_bytes_at_char_boundary(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transform::parse;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn outputs_within_both_budgets_are_kept() {
        let t = parse("truncate:codex").unwrap();
        assert_eq!(t.apply(&numbered(256), None), None);
        assert_eq!(t.apply(&"x".repeat(10_240), None), None);
    }

    #[test]
    fn too_many_lines_keep_128_head_and_128_tail_lines_around_the_marker() {
        let t = parse("truncate:codex").unwrap();
        let out = t.apply(&numbered(300), None).unwrap();
        // 300 short lines (2,592 bytes) fit in the bytes: only the line budget cuts.
        let expected = format!(
            "Total output lines: 300\n\n{}\n[... omitted 44 of 300 lines ...]\n\n{}",
            (1..=128).map(|i| format!("line {i}\n")).collect::<String>(),
            (173..=300).map(|i| format!("line {i}\n")).collect::<String>(),
        );
        assert_eq!(out, expected);
    }

    #[test]
    fn too_many_bytes_in_few_lines_keep_only_the_head() {
        let t = parse("truncate:codex").unwrap();
        // Three lines of 6,000 bytes: 18,002 bytes in 3 segments. All three go to the head (128
        // lines), none to the tail, so Codex keeps the first 5,120 bytes and the marker only.
        let line = "a".repeat(6_000);
        let out = t.apply(&format!("{line}\n{line}\n{line}"), None).unwrap();
        let expected =
            format!("Total output lines: 3\n\n{}\n[... omitted 0 of 3 lines ...]\n\n", "a".repeat(5_120));
        assert_eq!(out, expected);
    }

    #[test]
    fn too_many_bytes_in_many_lines_fill_the_budget_with_the_tail() {
        let t = parse("truncate:codex").unwrap();
        // 200 lines of 99 bytes + newline: 20,000 bytes, 200 lines. Head: 128 lines (12,800
        // bytes) cut to 5,120; tail: the last 72 lines (7,200 bytes) cut to what is left.
        let input: String = (0..200).map(|i| format!("{:0>99}\n", i)).collect();
        let out = t.apply(&input, None).unwrap();
        let marker = "\n[... omitted 0 of 200 lines ...]\n\n";
        let body = out.strip_prefix("Total output lines: 200\n\n").unwrap();
        assert_eq!(body.len(), 10_240);
        assert_eq!(&body[..5_120], &input[..5_120]);
        assert_eq!(&body[5_120..5_120 + marker.len()], marker);
        let tail = &body[5_120 + marker.len()..];
        assert!(input.ends_with(tail) && tail.len() == 10_240 - 5_120 - marker.len());
    }

    #[test]
    fn cuts_fall_on_char_boundaries() {
        assert_eq!(take_bytes_at_char_boundary("helloé", 6), "hello");
        assert_eq!(take_last_bytes_at_char_boundary("helloé", 2), "é");
        assert_eq!(take_last_bytes_at_char_boundary("helloé", 1), "");
        assert_eq!(take_last_bytes_at_char_boundary("abc😀", 3), "");
        // A 49-byte head budget cannot end inside a 2-byte char: 24 of them are kept.
        let t = parse("truncate:codex:bytes=99,lines=4").unwrap();
        let out = t.apply(&"é".repeat(200), None).unwrap();
        let body = out.strip_prefix("Total output lines: 1\n\n").unwrap();
        assert_eq!(body, format!("{}\n[... omitted 0 of 1 lines ...]\n\n", "é".repeat(24)));
    }
}
