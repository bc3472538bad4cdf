//! `truncate:codex` — OpenAI Codex CLI's head+tail truncation of a tool output at record time.
//!
//! Source: `openai/codex`, `codex-rs/core/src/tools/mod.rs`, later `codex-rs/core/src/truncate.rs`
//! (`MODEL_FORMAT_MAX_BYTES = 10 * 1024`, `MODEL_FORMAT_MAX_LINES = 256`, head lines = max / 2,
//! tail lines = the rest, head bytes = max bytes / 2; `format_exec_output` /
//! `format_output_for_model_body`, `truncate_formatted_exec_output`) and `codex-rs/utils/string`
//! (`take_bytes_at_char_boundary`, `take_last_bytes_at_char_boundary`). ANCHORS.md §4. Clients
//! still see the full stream; only what the model gets is cut.
//!
//! An output of at most 10 KiB and 256 lines (`str::lines`) is kept. Otherwise it becomes
//! `Total output lines: {M}\n\n` + a head + a marker + a tail, together at most 10 KiB, cuts on
//! char boundaries:
//! - over 256 lines (`split_inclusive('\n')` segments): the first 128 lines cut to 5 KiB,
//!   `\n[... omitted {N} of {M} lines ...]\n\n`, the last 128 lines cut to what is left of the
//!   10 KiB;
//! - within 256 lines but over 10 KiB: the output's first 5 KiB,
//!   `\n[... output truncated to fit {bytes} bytes ...]\n\n`, its last bytes up to the 10 KiB.
//!
//! **Few, long lines: the released cut by default** (`byte_cut=head`). The line-based code Codex
//! shipped takes every line of an output of at most 128 lines into the head, so the tail gets
//! nothing and a byte cut keeps only the first 5 KiB, then `[... omitted 0 of {M} lines ...]`: a
//! failed `cargo build` of a few long lines loses its error and reads as a success
//! (openai/codex#6415). This is what Codex CLI 0.40.0 records: the corpus's agentcmd rollouts
//! (`../shared/corpus/codex-cli/agentcmd/`, PROVENANCE.md: Codex CLI 0.40.0) hold
//! `[... omitted 0 of 140 lines ...]` and `[... omitted 0 of 84 lines ...]`, which only this cut
//! writes. `byte_cut=head-tail` is the fix PR #6476 proposed and that no release shipped (the PR
//! was closed unmerged): when the bytes alone are over, split the byte budget between head and
//! tail, 5 KiB each, under the marker upstream's `truncate.rs` uses for a byte cut, and when the
//! lines are over too, cut the lines first. What Codex shipped next is a split of the budget with
//! no line limit at all (`TruncationPolicy`, PR #6914): `truncate:codex-policy`
//! ([`super::codex_policy`]). `bytes=` and `lines=` set the two budgets.

use super::{Transform, TransformKind};
use crate::model::Output;
use crate::spec::{Param, builder};

/// The `truncate:codex` transform.
pub const KIND: TransformKind = TransformKind {
    name: "truncate:codex",
    about: "Codex CLI 0.40.0: outputs over 10 KiB or 256 lines keep 128 head lines (cut to 5 KiB), \
            `[... omitted N of M lines ...]` and the tail lines after the first 128 (cut to the rest); \
            `byte_cut=head-tail`: within 256 lines, the first 5 KiB and the last bytes (PR #6476)",
    source: "openai/codex codex-rs/core/src/tools/mod.rs format_exec_output as of Codex CLI 0.40.0 (commit \
             7f589e4 of that file; the corpus's 0.40.0 rollouts); byte_cut=head-tail: the unmerged \
             openai/codex#6476 (ANCHORS.md §4)",
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
        Param {
            key: "byte_cut",
            default: "head",
            about: "within the lines, over the bytes: `head`: the first 128 lines are the head, as Codex \
                    released it (#6415); `head-tail` keeps the first half of the bytes and the last rest \
                    (the unmerged PR #6476)",
        },
    ],
    build: |p| {
        let CodexParams { bytes, lines, byte_cut } = p.typed()?;
        let (max_bytes, max_lines) = (p.at_least("bytes", bytes, 1)?, p.at_least("lines", lines, 1)?);
        let spec = p.spec().to_owned();
        Ok(builder(move || {
            Box::new(Codex { spec: spec.clone(), max_bytes, max_lines, byte_cut }) as Box<dyn Transform>
        }))
    },
};

/// The parameters of `truncate:codex` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct CodexParams {
    pub bytes: usize,
    pub lines: usize,
    pub byte_cut: ByteCut,
}

/// How an output within the line budget but over the byte budget is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ByteCut {
    /// The output's first bytes and its last bytes (the unmerged openai/codex#6476).
    HeadTail,
    /// The first `lines / 2` lines are the head, only later lines the tail (as released).
    Head,
}

/// Codex's record-time truncation.
pub struct Codex {
    spec: String,
    max_bytes: usize,
    max_lines: usize,
    byte_cut: ByteCut,
}

impl Transform for Codex {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn apply(&self, output: &str, _tool: Option<&str>) -> Option<Output> {
        let total_lines = output.lines().count();
        if output.len() <= self.max_bytes && total_lines <= self.max_lines {
            return None;
        }
        let output = format!("Total output lines: {total_lines}\n\n{}", self.truncate(output, total_lines));
        Some(Output::Raw { output })
    }
}

impl Codex {
    /// `truncate_formatted_exec_output`, with the byte split of openai/codex#6476 when
    /// `byte_cut=head-tail`.
    fn truncate(&self, content: &str, total_lines: usize) -> String {
        let head_lines = self.max_lines / 2;
        let tail_lines = self.max_lines - head_lines;
        let head_bytes = self.max_bytes / 2;
        let segments: Vec<&str> = content.split_inclusive('\n').collect();
        let omitted = segments.len().saturating_sub(head_lines + tail_lines);
        let (head, tail, marker) = if omitted == 0 && self.byte_cut == ByteCut::HeadTail {
            // Only the bytes are over: head and tail are the first and last bytes of the whole
            // output, which is longer than the budget, so they never overlap.
            (content, content, format!("\n[... output truncated to fit {} bytes ...]\n\n", self.max_bytes))
        } else {
            let head_take = head_lines.min(segments.len());
            let tail_take = tail_lines.min(segments.len() - head_take);
            let head_end: usize = segments[..head_take].iter().map(|s| s.len()).sum();
            let tail_start =
                content.len() - segments[segments.len() - tail_take..].iter().map(|s| s.len()).sum::<usize>();
            let marker = format!("\n[... omitted {omitted} of {total_lines} lines ...]\n\n");
            (&content[..head_end], &content[tail_start..], marker)
        };

        let mut head_budget = head_bytes.min(self.max_bytes);
        let tail_budget = self.max_bytes.saturating_sub(head_budget + marker.len());
        if tail_budget == 0 && marker.len() >= self.max_bytes {
            return take_bytes_at_char_boundary(&marker, self.max_bytes).to_owned();
        }
        if tail_budget == 0 {
            head_budget = self.max_bytes.saturating_sub(marker.len());
        }
        let mut result = String::with_capacity(self.max_bytes.min(content.len()));
        result.push_str(take_bytes_at_char_boundary(head, head_budget));
        result.push_str(&marker);
        let remaining = self.max_bytes.saturating_sub(result.len());
        if remaining > 0 {
            result.push_str(take_last_bytes_at_char_boundary(tail, remaining));
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
    use crate::transform::{ApplyText, parse};

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn outputs_within_both_budgets_are_kept() {
        let t = parse("truncate:codex").unwrap();
        assert_eq!(t.apply_text(&numbered(256), None), None);
        assert_eq!(t.apply_text(&"x".repeat(10_240), None), None);
    }

    #[test]
    fn too_many_lines_keep_128_head_and_128_tail_lines_around_the_marker() {
        let t = parse("truncate:codex").unwrap();
        let out = t.apply_text(&numbered(300), None).unwrap();
        // 300 short lines (2,592 bytes) fit in the bytes: only the line budget cuts.
        let expected = format!(
            "Total output lines: 300\n\n{}\n[... omitted 44 of 300 lines ...]\n\n{}",
            (1..=128).map(|i| format!("line {i}\n")).collect::<String>(),
            (173..=300).map(|i| format!("line {i}\n")).collect::<String>(),
        );
        assert_eq!(out, expected);
    }

    #[test]
    fn with_the_6476_cut_few_long_lines_keep_the_first_half_of_the_bytes_and_the_last_rest() {
        let t = parse("truncate:codex:byte_cut=head-tail").unwrap();
        // openai/codex#6415: three lines of 6,000 bytes then the error, 18,023 bytes in 4 lines.
        // Within the 256 lines, so the byte budget alone cuts: 5,120 head bytes, the marker, and
        // the last 5,072 bytes, which end with the error.
        let line = "a".repeat(6_000);
        let input = format!("{line}\n{line}\n{line}\nerror: build failed\n");
        assert_eq!(input.len(), 18_023);
        let out = t.apply_text(&input, None).unwrap();
        let marker = "\n[... output truncated to fit 10240 bytes ...]\n\n";
        let expected = format!(
            "Total output lines: 4\n\n{}{marker}{}",
            &input[..5_120],
            &input[input.len() - (10_240 - 5_120 - marker.len())..]
        );
        assert_eq!(out, expected);
        assert!(out.ends_with("a\nerror: build failed\n"));
        assert_eq!(out.len() - "Total output lines: 4\n\n".len(), 10_240);
    }

    #[test]
    fn the_released_cut_drops_the_tail_of_few_long_lines() {
        assert_eq!(parse("truncate:codex").unwrap().spec(), "truncate:codex");
        let t = parse("truncate:codex").unwrap();
        // All 4 lines go to the head (128 lines), none to the tail: 5,120 bytes and the marker.
        let line = "a".repeat(6_000);
        let out = t.apply_text(&format!("{line}\n{line}\n{line}\nerror: build failed\n"), None).unwrap();
        let expected =
            format!("Total output lines: 4\n\n{}\n[... omitted 0 of 4 lines ...]\n\n", "a".repeat(5_120));
        assert_eq!(out, expected);
        assert_eq!(out.len(), 5_176);
        let e = parse("truncate:codex:byte_cut=tail").err().unwrap().to_string();
        assert!(e.contains("expected head-tail or head"), "{e}");
    }

    #[test]
    fn too_many_bytes_in_many_lines_fill_the_budget_with_the_tail() {
        // 200 lines of 99 bytes + newline: 20,000 bytes, 200 lines. Head: the first 5,120 bytes;
        // tail: the last bytes up to the budget; before the fix the same bytes, with the line
        // marker (the last 72 lines, 7,200 bytes, hold the tail).
        let input: String = (0..200).map(|i| format!("{:0>99}\n", i)).collect();
        for (spec, marker) in [
            ("truncate:codex:byte_cut=head-tail", "\n[... output truncated to fit 10240 bytes ...]\n\n"),
            ("truncate:codex", "\n[... omitted 0 of 200 lines ...]\n\n"),
        ] {
            let out = parse(spec).unwrap().apply_text(&input, None).unwrap();
            let body = out.strip_prefix("Total output lines: 200\n\n").unwrap();
            assert_eq!(body.len(), 10_240);
            assert_eq!(&body[..5_120], &input[..5_120]);
            assert_eq!(&body[5_120..5_120 + marker.len()], marker);
            let tail = &body[5_120 + marker.len()..];
            assert!(input.ends_with(tail) && tail.len() == 10_240 - 5_120 - marker.len());
        }
    }

    #[test]
    fn cuts_fall_on_char_boundaries() {
        assert_eq!(take_bytes_at_char_boundary("helloé", 6), "hello");
        assert_eq!(take_last_bytes_at_char_boundary("helloé", 2), "é");
        assert_eq!(take_last_bytes_at_char_boundary("helloé", 1), "");
        assert_eq!(take_last_bytes_at_char_boundary("abc😀", 3), "");
        // A 49-byte head budget cannot end inside a 2-byte char: 24 of them are kept; the 6 bytes
        // left after the 45-byte marker hold 3 chars of the tail.
        let t = parse("truncate:codex:bytes=99,lines=4,byte_cut=head-tail").unwrap();
        let out = t.apply_text(&"é".repeat(200), None).unwrap();
        let body = out.strip_prefix("Total output lines: 1\n\n").unwrap();
        let marker = "\n[... output truncated to fit 99 bytes ...]\n\n";
        assert_eq!(body, format!("{}{marker}{}", "é".repeat(24), "é".repeat(3)));
        // As released: the head only.
        let t = parse("truncate:codex:bytes=99,lines=4").unwrap();
        let out = t.apply_text(&"é".repeat(200), None).unwrap();
        let body = out.strip_prefix("Total output lines: 1\n\n").unwrap();
        assert_eq!(body, format!("{}\n[... omitted 0 of 1 lines ...]\n\n", "é".repeat(24)));
    }
}
