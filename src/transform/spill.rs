//! `spill:head=H,tail=T` — the seed's tool-side handling of huge outputs: the tool writes the whole
//! output to a file and returns its own `ToolOutput`: a summary that says so, and a sketch of the
//! output (its first H and last T lines) as the content.
//!
//! Source: SEED.md ("Huge outputs … are not the framework's job: the tool itself writes them to a
//! file and puts a map of it (a sketch: path, counts, head and tail) into `content`"; a summary
//! "alone must still tell what was done", e.g. `grep: TODO in src/ — 128 hits, saved to
//! /tmp/grep_result.txt`). The seed fixes no format and no size; these are ours, and each size is
//! a parameter:
//! - an output spills when it is longer than `over` bytes (default 51,200: opencode's tool-side
//!   cap, `MAX_BYTES = 50 * 1024` in `packages/opencode/src/tool/truncation.ts`, ANCHORS.md §1);
//! - the summary is `{tool}: {lines} lines, {bytes} bytes, saved to {dir}/{tool}-{hash}.txt`
//!   (without `{tool}: ` when the trace names no tool), the counts those of the whole output,
//!   lines as `str::lines` sees them;
//! - the content is the first `head` lines, `[... {n} lines omitted ...]` (when lines were left
//!   out) and the last `tail` lines, each line cut to `width` chars with `…` (so one giant line
//!   cannot make the sketch huge); the replay sends `summary + "\n" + content`, which so holds the
//!   seed's whole sketch, and a prune leaves the summary;
//! - `{hash}` is the first 16 hex digits of the output's xxh3-64, so the path is stable; nothing
//!   is written.
//!
//! **Decision: a split the tool builds, not a text.** A sketch returned as text would be split by
//! the seed's `From<String>`, whose summary is `"{lines} lines | {first 80 chars}…"` of the
//! *sketch*: the sketch's line count (42, not the output's 50,000) and a cut that drops the counts
//! when the path is long. The tool knows what it did, so it writes the summary, as the seed lets a
//! tool do. Its wording follows opencode's notice when it spills (the size first, then `Full
//! output saved to: {path}`, `truncation.ts`) and the seed's example (`tool: …, saved to PATH`):
//! the counts come before the path, so a summary cut short keeps them. `--resplit` re-splits what
//! a trace recorded; a spill comes after it and is kept.

use super::{Transform, TransformKind};
use crate::model::Output;
use crate::spec::{Param, builder};

/// The `spill` transform.
pub const KIND: TransformKind = TransformKind {
    name: "spill",
    about: "the seed's tool-side spill: outputs over `over` bytes are saved to a file; the tool's \
            summary names its lines, bytes and path, the content is a sketch of the first `head` and \
            last `tail` lines",
    source: "the seed design (SEED.md: huge outputs are written to a file, content is a sketch); \
             `over` is opencode's 50 KB MAX_BYTES and the summary follows its notice \
             (tool/truncation.ts), the other sizes are ours",
    params: &[
        Param { key: "head", default: "20", about: "first lines kept in the sketch" },
        Param { key: "tail", default: "20", about: "last lines kept in the sketch" },
        Param { key: "over", default: "51200", about: "outputs longer than this many bytes spill" },
        Param { key: "width", default: "200", about: "lines in the sketch are cut to this many chars" },
        Param { key: "dir", default: "/tmp/spill", about: "directory named in the summary's path" },
    ],
    build: |p| {
        let SpillParams { head, tail, over, width, dir } = p.typed()?;
        let width = p.at_least("width", width, 1)?;
        let (spec, dir) = (p.spec().to_owned(), dir.trim_end_matches('/').to_owned());
        Ok(builder(move || {
            Box::new(Spill { spec: spec.clone(), head, tail, over, width, dir: dir.clone() })
                as Box<dyn Transform>
        }))
    },
};

/// The parameters of `spill` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct SpillParams {
    pub head: usize,
    pub tail: usize,
    pub over: usize,
    pub width: usize,
    pub dir: String,
}

/// The seed's spill to a file.
pub struct Spill {
    spec: String,
    head: usize,
    tail: usize,
    over: usize,
    width: usize,
    dir: String,
}

impl Transform for Spill {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn apply(&self, output: &str, tool: Option<&str>) -> Option<Output> {
        if output.len() <= self.over {
            return None;
        }
        let lines: Vec<&str> = output.lines().collect();
        let head = self.head.min(lines.len());
        let tail = self.tail.min(lines.len() - head);
        let omitted = lines.len() - head - tail;
        let file: String = tool
            .unwrap_or("output")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        let hash = xxhash_rust::xxh3::xxh3_64(output.as_bytes());
        let path = format!("{}/{file}-{hash:016x}.txt", self.dir);
        let counts = format!("{} lines, {} bytes, saved to {path}", lines.len(), output.len());
        let summary = match tool {
            Some(name) => format!("{name}: {counts}"),
            None => counts,
        };
        let mut sketch: Vec<String> = lines[..head].iter().map(|l| self.cut(l)).collect();
        if omitted > 0 {
            sketch.push(format!("[... {omitted} lines omitted ...]"));
        }
        sketch.extend(lines[lines.len() - tail..].iter().map(|l| self.cut(l)));
        Some(Output::Split { summary, content: Some(sketch.join("\n")) })
    }
}

impl Spill {
    /// `line` cut to `width` chars, with `…` when cut.
    fn cut(&self, line: &str) -> String {
        match line.char_indices().nth(self.width) {
            Some((i, _)) => format!("{}…", &line[..i]),
            None => line.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::model::Output;
    use crate::transform::parse;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("row {i}\n")).collect()
    }

    fn split(summary: String, content: &str) -> Option<Output> {
        Some(Output::Split { summary, content: Some(content.to_owned()) })
    }

    #[test]
    fn outputs_up_to_the_limit_are_kept() {
        let t = parse("spill:over=100").unwrap();
        assert_eq!(t.apply(&"x".repeat(100), Some("grep")), None);
    }

    #[test]
    fn a_huge_output_becomes_the_tools_summary_and_a_sketch_of_head_and_tail() {
        let t = parse("spill:head=2,tail=3,over=100").unwrap();
        let input = numbered(50); // 9 × 6 + 41 × 7 = 341 bytes
        let hash = xxhash_rust::xxh3::xxh3_64(input.as_bytes());
        assert_eq!(
            t.apply(&input, Some("grep")),
            split(
                format!("grep: 50 lines, 341 bytes, saved to /tmp/spill/grep-{hash:016x}.txt"),
                "row 1\nrow 2\n[... 45 lines omitted ...]\nrow 48\nrow 49\nrow 50"
            )
        );
    }

    #[test]
    fn the_summary_keeps_the_output_counts_whatever_the_sketch_and_the_path() {
        // 50,000 lines spilled to a long path: the summary counts the output, not the sketch's 41
        // lines, and the counts come before the path (the seed's automatic summary of the sketch
        // was `42 lines | [saved to /tmp/spill/…` and its 80-char cut lost the counts).
        let dir = format!("/{}", "deep/".repeat(20));
        let t = parse(&format!("spill:dir={dir}")).unwrap();
        let input = numbered(50_000);
        let Some(Output::Split { summary, content: Some(sketch) }) = t.apply(&input, Some("Bash")) else {
            panic!()
        };
        let counts = format!("Bash: 50000 lines, {} bytes, saved to ", input.len());
        assert!(summary.starts_with(&counts), "{summary}");
        assert!(summary.ends_with(".txt") && summary.contains(&dir));
        assert_eq!(sketch.lines().count(), 41);
        assert!(sketch.contains("\n[... 49960 lines omitted ...]\n"));
        // Without a tool name the summary is the counts and the path.
        let Some(Output::Split { summary, .. }) = t.apply(&input, None) else { panic!() };
        assert!(summary.starts_with("50000 lines, ") && summary.contains("/output-"), "{summary}");
    }

    #[test]
    fn long_lines_are_cut_and_short_outputs_show_every_line() {
        let t = parse("spill:head=5,tail=5,over=10,width=4,dir=/data/").unwrap();
        let hash = xxhash_rust::xxh3::xxh3_64(b"abcdefgh\nxy");
        assert_eq!(
            t.apply("abcdefgh\nxy", Some("mcp__fs/read")),
            split(
                format!("mcp__fs/read: 2 lines, 11 bytes, saved to /data/mcp__fs_read-{hash:016x}.txt"),
                "abcd…\nxy"
            )
        );
    }
}
