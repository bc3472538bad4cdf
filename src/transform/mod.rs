//! Record-time transforms: changes a tool or harness makes to an output *before* it enters the
//! history and is split (truncation, spilling a huge output to a file and keeping a sketch).
//!
//! They are combinable with any prune policy and applied once per output when a conversation is
//! measured. Pure functions of the output text: no I/O (a spill names the file it would write; it
//! writes nothing).
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
use crate::policy::{fill_params, split_pairs};

/// A change applied to every raw tool output before the split.
pub trait Transform: Send + Sync {
    /// The spec that names this transform and its parameters.
    fn spec(&self) -> String;
    /// The transformed output, or `None` when this output is left as it is.
    fn apply(&self, output: &str, tool: Option<&str>) -> Option<String>;
}

impl std::fmt::Debug for dyn Transform {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Transform({})", self.spec())
    }
}

/// A transform kind: its name, parameters, source and constructor (the same shape as a policy's).
pub type TransformKind = crate::policy::Kind<dyn Transform>;

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
    (kind.build)(&params)
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
}
