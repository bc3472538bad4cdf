//! `truncate:mini` — mini-swe-agent's observation template for long outputs, at record time.
//!
//! Source: `SWE-agent/mini-swe-agent`, `model.observation_template` of
//! `src/minisweagent/config/mini.yaml` and of `default.yaml`, read at `a83fcae` (v2.4.6). Both
//! show an output of fewer than 10,000 characters whole, and otherwise its first 5,000 and last
//! 5,000 characters and the count of characters elided, in two wordings (`template=`):
//!
//! - `mini` (the default): `mini.yaml`, which the `mini` command uses
//!   (`run/mini.py`, `DEFAULT_CONFIG_FILE`), has since v2.0.0 (`89c6c5d`) sent a JSON object:
//!   `"output_head"` and `"output_tail"` through Jinja's `tojson` (Python's `json.dumps`, so
//!   non-ASCII as `\uXXXX`, then `<`, `>`, `&` and `'` as `\u003c`, `\u003e`, `\u0026`, `\u0027`),
//!   `"elided_chars"` and `"warning": "Output too long."`.
//! - `default`: `default.yaml`'s `<warning>` to use narrower commands and the `<output_head>`,
//!   `<elided_chars>` and `<output_tail>` tags around the raw text. The SWE-bench configs and
//!   `mini_textbased.yaml` use it too, and so did `mini.yaml` before v2.0.0: the corpus's
//!   mini-swe-agent v1.15.0 trajectories show it (`tests/it/corpus_transforms.rs`).
//!
//! Lengths are in characters (Python code points): `{head}` = `output[:5000]`, `{tail}` =
//! `output[-5000:]` and the count `len(output) - 10000`. With another `limit` each side keeps
//! `limit / 2` chars and the count is of the chars actually removed between them,
//! `len(output) - 2 * (limit / 2)` (an odd `limit` keeps one char fewer than it names). What both
//! templates send for every output, short or long, is left out: `default`'s `<returncode>` line,
//! `mini`'s `"returncode"` member, and the wrapping of a short output (`default`'s `<output>` tags,
//! `mini`'s JSON object with the output escaped), which this transform does not model: it replaces
//! a long output by what mini-swe-agent shows in its place, and leaves a short one as it is.
//! mini-swe-agent does no other history processing (ANCHORS.md §3).

use std::fmt::Write as _;

use super::{Transform, TransformKind};
use crate::model::Output;
use crate::spec::{Param, builder};

/// The warning `default.yaml` prints before a truncated output.
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
    about: "mini-swe-agent: outputs of 10,000 chars or more become the first and last 5,000 chars \
            and the count elided, as mini.yaml's JSON (template=mini) or default.yaml's warning and \
            tags (template=default)",
    source: "SWE-agent/mini-swe-agent src/minisweagent/config/mini.yaml and default.yaml \
             observation_template (read at a83fcae; mini.yaml's JSON since v2.0.0, 89c6c5d) (ANCHORS.md §3)",
    params: &[
        Param {
            key: "limit",
            default: "10000",
            about: "chars from which an output is cut; half of it (rounded down) is kept each side",
        },
        Param {
            key: "template",
            default: "mini",
            about: "mini: mini.yaml's JSON, what the mini command sends since v2.0; default: \
                    default.yaml's warning and tags (the SWE-bench configs, mini.yaml before v2.0)",
        },
    ],
    build: |p| {
        let MiniParams { limit, template } = p.typed()?;
        let (spec, limit) = (p.spec().to_owned(), p.at_least("limit", limit, 2)?);
        Ok(builder(move || Box::new(Mini { spec: spec.clone(), limit, template }) as Box<dyn Transform>))
    },
};

/// The parameters of `truncate:mini` (see [`KIND`] for each one's meaning and default).
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct MiniParams {
    pub limit: usize,
    pub template: Template,
}

/// Which mini-swe-agent config's template words the cut (`template=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Template {
    /// `mini.yaml`: a JSON object with the ends escaped.
    Mini,
    /// `default.yaml`: the warning and the tags around the raw ends.
    Default,
}

/// mini-swe-agent's truncation.
pub struct Mini {
    spec: String,
    limit: usize,
    template: Template,
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
        let (head, tail) = (&output[..head_end], &output[tail_start..]);
        // What is removed, not `chars - limit`: for an odd limit the two halves keep limit - 1.
        let elided = chars - 2 * half;
        let output = match self.template {
            Template::Mini => format!(
                "{{\n  \"output_head\": {},\n  \"output_tail\": {},\n  \"elided_chars\": {elided},\n  \"warning\": \"Output too long.\"\n}}",
                jinja_tojson(head),
                jinja_tojson(tail)
            ),
            Template::Default => format!(
                "{WARNING}<output_head>\n{head}\n</output_head>\n<elided_chars>\n{elided} characters elided\n</elided_chars>\n<output_tail>\n{tail}\n</output_tail>"
            ),
        };
        Some(Output::Raw { output })
    }
}

/// Jinja2's `tojson` of a string: Python's `json.dumps` (ASCII only: `\uXXXX` for every other char,
/// a surrogate pair above U+FFFF, lower-case hex) with `<`, `>`, `&` and `'` escaped for HTML
/// (`htmlsafe_json_dumps`).
fn jinja_tojson(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8 + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\'' => escape_units(&mut out, c),
            ' '..='~' => out.push(c),
            _ => escape_units(&mut out, c),
        }
    }
    out.push('"');
    out
}

/// `c` as `\uXXXX` per UTF-16 unit.
fn escape_units(out: &mut String, c: char) {
    for unit in c.encode_utf16(&mut [0; 2]) {
        // Writing to a String cannot fail.
        let _ = write!(out, "\\u{unit:04x}");
    }
}

#[cfg(test)]
mod tests {
    use crate::transform::{ApplyText, parse};

    #[test]
    fn short_outputs_are_kept() {
        for spec in ["truncate:mini", "truncate:mini:template=default"] {
            assert_eq!(parse(spec).unwrap().apply_text(&"x".repeat(9_999), None), None, "{spec}");
        }
    }

    #[test]
    fn default_yaml_keeps_5000_chars_each_side_byte_for_byte() {
        let t = parse("truncate:mini:template=default").unwrap();
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
        let t = parse("truncate:mini:limit=11,template=default").unwrap();
        let out = t.apply_text("abcdeXfghij", None).unwrap();
        assert!(out.contains("<output_head>\nabcde\n</output_head>"), "{out}");
        assert!(out.contains("\n1 characters elided\n"), "{out}");
        assert!(out.contains("<output_tail>\nfghij\n</output_tail>"), "{out}");
        let out = t.apply_text(&format!("abcde{}fghij", "X".repeat(10)), None).unwrap();
        assert!(out.contains("\n10 characters elided\n"), "{out}");
    }

    #[test]
    fn mini_yaml_sends_the_ends_as_json_escaped_by_jinja() {
        let t = parse("truncate:mini").unwrap();
        // Every escape class at the head: HTML-safe chars, non-ASCII, a char above U+FFFF, a
        // control char, DEL, a quote, a backslash, a newline (20 chars, then 4,980 h's).
        let special = "<a href='x'>&é😀\u{1}\u{7f}\"\\\n";
        let input = format!("{special}{}{}{}", "h".repeat(4_980), "m".repeat(7), "t".repeat(5_000));
        let out = t.apply_text(&input, None).unwrap();
        // Checked against mini.yaml's observation_template (a83fcae) rendered by Jinja2 3.1.6
        // (the `"returncode"` line removed).
        let expected = format!(
            "{{\n  \"output_head\": \"\\u003ca href=\\u0027x\\u0027\\u003e\\u0026\\u00e9\\ud83d\\ude00\\u0001\\u007f\\\"\\\\\\n{}\",\n  \
             \"output_tail\": \"{}\",\n  \"elided_chars\": 7,\n  \"warning\": \"Output too long.\"\n}}",
            "h".repeat(4_980),
            "t".repeat(5_000)
        );
        assert_eq!(out, expected);
        // Under 10,000 chars it is left as it is; an odd limit elides what it removes.
        assert_eq!(t.apply_text(&"é".repeat(9_999), None), None);
        let out = parse("truncate:mini:limit=11").unwrap().apply_text("abcdeXfghij", None).unwrap();
        assert_eq!(
            out,
            "{\n  \"output_head\": \"abcde\",\n  \"output_tail\": \"fghij\",\n  \"elided_chars\": 1,\n  \"warning\": \"Output too long.\"\n}"
        );
    }

    #[test]
    fn an_unknown_template_is_refused_with_the_valid_ones() {
        let e = parse("truncate:mini:template=swebench").err().unwrap().to_string();
        assert!(e.contains("`template`") && e.contains("mini") && e.contains("default"), "{e}");
    }
}
