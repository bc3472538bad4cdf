//! `truncate:mini` — mini-swe-agent's observation template for long outputs, at record time.
//!
//! Source: `SWE-agent/mini-swe-agent`, `src/minisweagent/config/default.yaml`
//! `action_observation_template`: an output of fewer than 10,000 characters is shown whole;
//! otherwise a warning to use narrower commands, the first 5,000 and the last 5,000 characters and
//! the count of characters elided. ANCHORS.md §3. mini-swe-agent does no other history processing.
//!
//! Rendered with the template's whitespace control (`{%- ... -%}`), the long-output branch is the
//! text below with `{head}` = `output[:5000]`, `{tail}` = `output[-5000:]` and `{n}` =
//! `len(output) - 10000`, lengths in characters (Python code points). With another `limit` each
//! side keeps `limit / 2` chars and `{n}` counts the chars actually removed between them,
//! `len(output) - 2 * (limit / 2)` (an odd `limit` keeps one char fewer than it names). The
//! template's `<returncode>` line and the `<output>` wrapper of short outputs are not the output's
//! own text and are left out: the transform replaces the output by what mini-swe-agent shows in
//! its place.

use super::{Transform, TransformKind};
use crate::model::Output;
use crate::spec::{Param, builder};

/// The warning mini-swe-agent prints before a truncated output.
pub const WARNING: &str = "<warning>\n\
The output of your last command was too long.\n\
Please try a different command that produces less output.\n\
If you're looking at a file you can try use head, tail or sed to view a smaller number of lines selectively.\n\
If you're using grep or find and it produced too much output, you can use a more selective search pattern.\n\
If you really need to see something from the full command's output, you can redirect output to a file and then search in that file.\n\
</warning>";

/// The `truncate:mini` transform.
pub const KIND: TransformKind = TransformKind {
    name: "truncate:mini",
    about: "mini-swe-agent: outputs of 10,000 chars or more become a warning, the first and last \
            5,000 chars and the count elided",
    source: "SWE-agent/mini-swe-agent src/minisweagent/config/default.yaml action_observation_template (ANCHORS.md §3)",
    params: &[Param {
        key: "limit",
        default: "10000",
        about: "chars from which an output is cut; half of it (rounded down) is kept each side",
    }],
    build: |p| {
        let MiniParams { limit } = p.typed()?;
        let (spec, limit) = (p.spec().to_owned(), p.at_least("limit", limit, 2)?);
        Ok(builder(move || Box::new(Mini { spec: spec.clone(), limit }) as Box<dyn Transform>))
    },
};

/// The parameters of `truncate:mini` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct MiniParams {
    pub limit: usize,
}

/// mini-swe-agent's truncation.
pub struct Mini {
    spec: String,
    limit: usize,
}

impl Transform for Mini {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    fn apply(&self, output: &str, _tool: Option<&str>) -> Option<Output> {
        let chars = output.chars().count();
        if chars < self.limit {
            return None;
        }
        let half = self.limit / 2;
        let head_end = output.char_indices().nth(half).map_or(output.len(), |(i, _)| i);
        let tail_start = output.char_indices().nth(chars - half).map_or(output.len(), |(i, _)| i);
        // What is removed, not `chars - limit`: for an odd limit the two halves keep limit - 1.
        let elided = chars - 2 * half;
        let output = format!(
            "{WARNING}<output_head>\n{}\n</output_head>\n<elided_chars>\n{elided} characters elided\n</elided_chars>\n<output_tail>\n{}\n</output_tail>",
            &output[..head_end],
            &output[tail_start..]
        );
        Some(Output::Raw { output })
    }
}

#[cfg(test)]
mod tests {
    use crate::transform::{ApplyText, parse};

    #[test]
    fn short_outputs_are_kept() {
        let t = parse("truncate:mini").unwrap();
        assert_eq!(t.apply_text(&"x".repeat(9_999), None), None);
    }

    #[test]
    fn long_outputs_keep_5000_chars_each_side_byte_for_byte() {
        let t = parse("truncate:mini").unwrap();
        let input = format!("{}{}{}", "h".repeat(5_000), "m".repeat(2_345), "t".repeat(5_000));
        let out = t.apply_text(&input, None).unwrap();
        // Checked against the template rendered by Jinja2 3.1.6 (the `<returncode>` line removed).
        let expected = format!(
            "<warning>\nThe output of your last command was too long.\nPlease try a different command that produces less output.\n\
             If you're looking at a file you can try use head, tail or sed to view a smaller number of lines selectively.\n\
             If you're using grep or find and it produced too much output, you can use a more selective search pattern.\n\
             If you really need to see something from the full command's output, you can redirect output to a file and then search in that file.\n\
             </warning><output_head>\n{}\n</output_head>\n<elided_chars>\n2345 characters elided\n</elided_chars>\n<output_tail>\n{}\n</output_tail>",
            "h".repeat(5_000),
            "t".repeat(5_000)
        );
        assert_eq!(out, expected);
        // Exactly 10,000 chars: cut, nothing elided.
        let out = t.apply_text(&"é".repeat(10_000), None).unwrap();
        assert!(out.contains("\n0 characters elided\n"));
        assert!(out.contains(&format!("<output_head>\n{}\n</output_head>", "é".repeat(5_000))));
    }

    #[test]
    fn an_odd_limit_reports_the_chars_actually_removed() {
        // limit=11 keeps 5 chars each side: of 11 chars one is removed, of 20 ten.
        let t = parse("truncate:mini:limit=11").unwrap();
        let out = t.apply_text("abcdeXfghij", None).unwrap();
        assert!(out.contains("<output_head>\nabcde\n</output_head>"), "{out}");
        assert!(out.contains("\n1 characters elided\n"), "{out}");
        assert!(out.contains("<output_tail>\nfghij\n</output_tail>"), "{out}");
        let out = t.apply_text(&format!("abcde{}fghij", "X".repeat(10)), None).unwrap();
        assert!(out.contains("\n10 characters elided\n"), "{out}");
    }
}
