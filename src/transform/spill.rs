//! `spill:head=H,tail=T` — the seed's tool-side handling of huge outputs: the tool writes the whole
//! output to a file and puts a sketch of it in its place (path, counts, first H and last T lines).
//!
//! Source: SEED.md ("Huge outputs … are not the framework's job: the tool itself writes them to a
//! file and puts a map of it (a sketch: path, counts, head and tail) into `content`"). The seed
//! fixes no format and no size; these are ours, and each is a parameter:
//! - an output spills when it is longer than `over` bytes (default 51,200: opencode's tool-side
//!   cap, `MAX_BYTES = 50 * 1024` in `packages/opencode/src/tool/truncation.ts`, ANCHORS.md §1);
//! - the sketch is
//!   `[saved to {dir}/{tool}-{hash}.txt: {lines} lines, {bytes} bytes]` then the first `head` lines,
//!   `[... {n} lines omitted ...]` (when lines were left out) and the last `tail` lines, each line
//!   cut to `width` chars with `…` (so one giant line cannot make the sketch huge), lines as
//!   `str::lines` sees them;
//! - `{hash}` is the first 16 hex digits of the output's xxh3-64, so the path is stable; nothing
//!   is written.
//!
//! The first line of the sketch is what the seed's automatic summary then quotes.

use super::{Transform, TransformKind};
use crate::policy::Param;

/// The `spill` transform.
pub const KIND: TransformKind = TransformKind {
    name: "spill",
    about: "the seed's tool-side spill: outputs over `over` bytes become a sketch (path, counts, \
            first `head` and last `tail` lines)",
    source: "the seed design (SEED.md: huge outputs are written to a file, content is a sketch); \
             `over` is opencode's 50 KB MAX_BYTES, the other sizes are ours",
    params: &[
        Param { key: "head", default: "20", about: "first lines kept in the sketch" },
        Param { key: "tail", default: "20", about: "last lines kept in the sketch" },
        Param { key: "over", default: "51200", about: "outputs longer than this many bytes spill" },
        Param { key: "width", default: "200", about: "lines in the sketch are cut to this many chars" },
        Param { key: "dir", default: "/tmp/spill", about: "directory named in the sketch's path" },
    ],
    build: |p| {
        Ok(Box::new(Spill {
            spec: p.spec().to_owned(),
            head: p.get("head")?,
            tail: p.get("tail")?,
            over: p.get("over")?,
            width: p.at_least("width", 1)?,
            dir: p.text("dir").trim_end_matches('/').to_owned(),
        }))
    },
};

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

    fn apply(&self, output: &str, tool: Option<&str>) -> Option<String> {
        if output.len() <= self.over {
            return None;
        }
        let lines: Vec<&str> = output.lines().collect();
        let head = self.head.min(lines.len());
        let tail = self.tail.min(lines.len() - head);
        let omitted = lines.len() - head - tail;
        let tool: String = tool
            .unwrap_or("output")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        let hash = xxhash_rust::xxh3::xxh3_64(output.as_bytes());
        let mut sketch = format!(
            "[saved to {}/{tool}-{hash:016x}.txt: {} lines, {} bytes]",
            self.dir,
            lines.len(),
            output.len()
        );
        for line in &lines[..head] {
            sketch.push('\n');
            sketch.push_str(&self.cut(line));
        }
        if omitted > 0 {
            sketch.push_str(&format!("\n[... {omitted} lines omitted ...]"));
        }
        for line in &lines[lines.len() - tail..] {
            sketch.push('\n');
            sketch.push_str(&self.cut(line));
        }
        Some(sketch)
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
    use crate::transform::parse;

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("row {i}\n")).collect()
    }

    #[test]
    fn outputs_up_to_the_limit_are_kept() {
        let t = parse("spill:over=100").unwrap();
        assert_eq!(t.apply(&"x".repeat(100), Some("grep")), None);
    }

    #[test]
    fn a_huge_output_becomes_a_sketch_with_path_counts_head_and_tail() {
        let t = parse("spill:head=2,tail=3,over=100").unwrap();
        let input = numbered(50); // 9 × 6 + 41 × 7 = 341 bytes
        let out = t.apply(&input, Some("grep")).unwrap();
        let hash = xxhash_rust::xxh3::xxh3_64(input.as_bytes());
        assert_eq!(
            out,
            format!(
                "[saved to /tmp/spill/grep-{hash:016x}.txt: 50 lines, 341 bytes]\nrow 1\nrow 2\n\
                 [... 45 lines omitted ...]\nrow 48\nrow 49\nrow 50"
            )
        );
    }

    #[test]
    fn long_lines_are_cut_and_short_outputs_show_every_line() {
        let t = parse("spill:head=5,tail=5,over=10,width=4,dir=/data/").unwrap();
        let out = t.apply("abcdefgh\nxy", Some("mcp__fs/read")).unwrap();
        let hash = xxhash_rust::xxh3::xxh3_64(b"abcdefgh\nxy");
        assert_eq!(
            out,
            format!("[saved to /data/mcp__fs_read-{hash:016x}.txt: 2 lines, 11 bytes]\nabcd…\nxy")
        );
    }
}
