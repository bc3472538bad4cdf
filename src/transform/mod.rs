//! Record-time transforms: changes a tool or harness makes to an output *before* it enters the
//! history and is split (truncation, spilling a huge output to a file and keeping a sketch).
//!
//! They are combinable with any prune policy and applied once per output when a conversation is
//! measured. Pure functions of the output text: no I/O (a spill names the file it would write; it
//! writes nothing).
//!
//! A transform returns a changed text, or, as a tool that builds its own `ToolOutput` would, a
//! summary and content ([`Output::Split`], e.g. `spill`); [`apply_all`] chains them.
//!
//! Transforms are parsed from specs like the policies' ([`parse`]): a kind name, which may itself
//! contain a `:` (`truncate:codex`), then optionally `:key=value,...` (`spill:head=10,tail=10`,
//! `truncate:codex:bytes=20480`). [`registry`] lists every kind with its parameters, defaults and
//! source. One file per transform.

pub mod codex;
pub mod codex_policy;
pub mod mini;
pub mod spill;

use crate::error::SpecError;
use crate::model::Output;
use crate::spec::{fill_params, split_pairs};

/// A change applied to every raw tool output before the split.
pub trait Transform: Send + Sync {
    /// The spec that names this transform and its parameters.
    fn spec(&self) -> String;
    /// The transformed output — a changed text ([`Output::Raw`], which the seed's rule then
    /// splits) or a summary and content the tool wrote itself ([`Output::Split`], kept as it is)
    /// — or `None` when this output is left as it is.
    fn apply(&self, output: &str, tool: Option<&str>) -> Option<Output>;
}

/// `transforms` applied in order to the raw `output` of `tool`. A transform after one that split
/// the output works on its content: a text it returns replaces the content (the tool's summary
/// stays), a split replaces both; a split without content is left as it is.
pub fn apply_all(transforms: &[Box<dyn Transform>], output: String, tool: Option<&str>) -> Output {
    let mut out = Output::Raw { output };
    for t in transforms {
        let text = match &out {
            Output::Raw { output } | Output::Split { content: Some(output), .. } => output,
            Output::Split { content: None, .. } => break,
        };
        let Some(changed) = t.apply(text, tool) else { continue };
        out = match (out, changed) {
            (Output::Split { summary, .. }, Output::Raw { output }) => {
                Output::Split { summary, content: Some(output) }
            }
            (_, changed) => changed,
        };
    }
    out
}

impl std::fmt::Debug for dyn Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transform({})", self.spec())
    }
}

/// A transform kind: its name, parameters, source and constructor (the same shape as a policy's).
pub type TransformKind = crate::spec::Kind<dyn Transform>;

/// Every transform kind, in listing order.
pub fn registry() -> &'static [TransformKind] {
    &[codex::KIND, codex_policy::KIND, mini::KIND, spill::KIND]
}

/// Parses and builds a transform from its spec.
pub fn parse(spec: &str) -> Result<Box<dyn Transform>, SpecError> {
    let text = spec.trim();
    let kind = registry()
        .iter()
        .filter(|k| text == k.name || text.strip_prefix(k.name).is_some_and(|rest| rest.starts_with(':')))
        .max_by_key(|k| k.name.len())
        .ok_or_else(|| SpecError::UnknownTransform {
            spec: text.to_owned(),
            valid: registry().iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
        })?;
    let pairs = match text[kind.name.len()..].strip_prefix(':') {
        Some(rest) => split_pairs(text, rest)?,
        None => Vec::new(),
    };
    let params = fill_params(text, kind.params, pairs, |key, valid| SpecError::UnknownTransformKey {
        spec: text.to_owned(),
        transform: kind.name.to_owned(),
        key,
        valid,
    })?;
    Ok((kind.build)(&params)?())
}

/// For tests of transforms that only change the text: [`Transform::apply`]'s text.
#[cfg(test)]
pub(crate) trait ApplyText {
    /// The changed text, or `None`; panics on a split.
    fn apply_text(&self, output: &str, tool: Option<&str>) -> Option<String>;
}

#[cfg(test)]
impl ApplyText for Box<dyn Transform> {
    fn apply_text(&self, output: &str, tool: Option<&str>) -> Option<String> {
        self.apply(output, tool).map(|o| match o {
            Output::Raw { output } => output,
            split => panic!("{} split the output: {split:?}", self.spec()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_with_a_colon_and_parameters_after_another() {
        assert_eq!(parse("truncate:codex").unwrap().spec(), "truncate:codex");
        assert_eq!(parse(" truncate:mini ").unwrap().spec(), "truncate:mini");
        assert_eq!(parse("truncate:codex:bytes=2048").unwrap().spec(), "truncate:codex:bytes=2048");
        // The longest name that the spec starts with wins: not `truncate:codex` with `-policy`.
        assert_eq!(
            parse("truncate:codex-policy:mode=bytes").unwrap().spec(),
            "truncate:codex-policy:mode=bytes"
        );
        assert_eq!(parse("spill:head=3,tail=4").unwrap().spec(), "spill:head=3,tail=4");
        assert_eq!(parse("spill").unwrap().spec(), "spill");
    }

    #[test]
    fn errors_name_the_spec_and_list_what_is_valid() {
        let e = parse("truncate:aider").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown transform `truncate:aider`; valid transforms: truncate:codex, truncate:codex-policy, truncate:mini, spill"
        );
        let e = parse("spill:lines=3").unwrap_err().to_string();
        assert_eq!(
            e,
            "transform `spill` has no parameter `lines` (in `spill:lines=3`); valid keys: head, tail, over, width, dir"
        );
        let e = parse("spill:head=three").unwrap_err().to_string();
        assert!(e.starts_with("bad value for `head` in `spill:head=three`"), "{e}");
    }

    #[test]
    fn every_registered_transform_builds_with_its_defaults() {
        for k in registry() {
            let t = parse(k.name).unwrap_or_else(|e| panic!("{}: {e}", k.name));
            assert_eq!(t.spec(), k.name);
            assert_eq!(t.apply("short", None), None, "{}", k.name);
        }
    }

    #[test]
    fn transforms_after_a_split_change_its_content_and_keep_its_summary() {
        let chain = |specs: &[&str], output: &str| {
            let ts: Vec<Box<dyn Transform>> = specs.iter().map(|s| parse(s).unwrap()).collect();
            apply_all(&ts, output.to_owned(), Some("grep"))
        };
        let input: String = (1..=50).map(|i| format!("row {i} {}\n", "x".repeat(20))).collect();
        // The spill splits; truncate:mini then cuts the sketch (its content) only.
        let Output::Split { summary, content: Some(sketch) } =
            chain(&["spill:over=100,head=30,tail=0"], &input)
        else {
            panic!()
        };
        let Output::Split { summary: kept, content: Some(cut) } =
            chain(&["spill:over=100,head=30,tail=0", "truncate:mini:limit=100"], &input)
        else {
            panic!()
        };
        assert_eq!(kept, summary);
        assert_eq!(Some(cut), parse("truncate:mini:limit=100").unwrap().apply_text(&sketch, None));
        // A text transform alone gives a text; nothing to do gives the output back.
        assert!(matches!(chain(&["truncate:mini:limit=100"], &input), Output::Raw { .. }));
        assert_eq!(chain(&["spill"], "short"), Output::Raw { output: "short".into() });
    }
}
