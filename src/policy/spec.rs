//! Policy kinds by name and the specs that name them: [`Kind`] (a name, its declared parameters,
//! its source and a constructor), the [`Registry`] of kinds a spec may name (the built-ins, plus
//! any a library user registers), and [`PolicySpec`], a spec parsed and checked once, which then
//! builds a fresh policy per conversation without parsing again. Nothing here prints or reads files.

use super::{Builder, Kind, Params, fill_params, split_pairs};
use super::{Policy, anthropic, budget, claude_code_micro, complexity_trap, gemini, keep_results};
use super::{compact, keep_turns, langchain, none, openclaw, opencode, openhands, swe_agent};
use crate::error::SpecError;

/// Every built-in policy kind, in listing order.
pub fn registry() -> &'static [Kind] {
    &[
        none::KIND,
        keep_turns::KIND,
        keep_results::KIND,
        budget::KIND,
        anthropic::KIND,
        langchain::KIND,
        opencode::KIND,
        gemini::KIND,
        swe_agent::KIND,
        complexity_trap::KIND,
        openhands::MASKING,
        openhands::AMORTIZED,
        openclaw::KIND,
        claude_code_micro::KIND,
        compact::claude_code::KIND,
        compact::codex::KIND,
        compact::opencode::KIND,
        compact::anthropic_sdk::KIND,
        compact::openhands::KIND,
        compact::goose::KIND,
        compact::goose_tools::KIND,
    ]
}

/// The name and the parameter text of a spec: `name[:params]`, where a compaction policy's name
/// is `compact:<agent>`, colon included.
fn split_name(text: &str) -> (&str, Option<&str>) {
    let skip = if text.starts_with("compact:") { "compact:".len() } else { 0 };
    match text[skip..].find(':') {
        Some(i) => (text[..skip + i].trim(), Some(&text[skip + i + 1..])),
        None => (text, None),
    }
}

/// The policy kinds a spec may name: the built-ins ([`Registry::builtin`]) and any registered.
#[derive(Debug, Clone)]
pub struct Registry {
    kinds: Vec<Kind>,
}

impl Default for Registry {
    fn default() -> Self {
        Registry::builtin()
    }
}

impl Registry {
    /// The built-in kinds ([`registry`]).
    pub fn builtin() -> Registry {
        Registry { kinds: registry().to_vec() }
    }

    /// Adds `kind`, listed after the others; a kind of the same name is replaced in its place.
    pub fn register(&mut self, kind: Kind) -> &mut Registry {
        match self.kinds.iter_mut().find(|k| k.name == kind.name) {
            Some(k) => *k = kind,
            None => self.kinds.push(kind),
        }
        self
    }

    /// The kinds, in listing order.
    pub fn kinds(&self) -> &[Kind] {
        &self.kinds
    }

    /// The kind named `name`.
    pub fn get(&self, name: &str) -> Option<&Kind> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// Parses `name` or `name:key=value,key=value` against these kinds ([`PolicySpec::parse`]).
    pub fn parse(&self, spec: &str) -> Result<PolicySpec, SpecError> {
        let text = spec.trim().to_owned();
        if let Some((prune, compaction)) = text.split_once("+compact:") {
            return self.combined(&text, prune, &format!("compact:{compaction}"));
        }
        let (name, rest) = split_name(&text);
        let pairs = match rest {
            Some(rest) => split_pairs(&text, rest)?,
            None => Vec::new(),
        };
        let name = name.to_owned();
        self.from_pairs(text, &name, pairs)
    }

    /// `prune` and `compaction` run together ([`compact::combine`]), shown as `text`.
    fn combined(&self, text: &str, prune: &str, compaction: &str) -> Result<PolicySpec, SpecError> {
        combine_specs(text, self.parse(prune)?, self.parse(compaction)?)
    }

    /// A spec of kind `name` with `pairs` of key and value text, shown in reports as `text` (a
    /// name given in a policies file, or the spec as written). Checks the name, keys and values.
    pub fn from_pairs(
        &self,
        text: impl Into<String>,
        name: &str,
        pairs: Vec<(String, String)>,
    ) -> Result<PolicySpec, SpecError> {
        let text = text.into();
        let kind = *self.get(name).ok_or_else(|| SpecError::UnknownName {
            spec: text.clone(),
            name: name.to_owned(),
            valid: self.kinds.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
        })?;
        let params = fill_params(&text, kind.params, pairs, |key, valid| SpecError::UnknownKey {
            spec: text.clone(),
            policy: kind.name.to_owned(),
            key,
            valid,
        })?;
        let builder = (kind.build)(&params)?;
        Ok(PolicySpec { text, kind, params, builder })
    }
}

/// A parsed, validated policy spec.
#[derive(Clone)]
pub struct PolicySpec {
    text: String,
    kind: Kind,
    pub(crate) params: Params,
    builder: Builder<dyn Policy>,
}

impl std::fmt::Debug for PolicySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySpec").field("text", &self.text).field("params", &self.params).finish()
    }
}

impl PolicySpec {
    /// Parses `name` or `name:key=value,key=value` against the built-in kinds, checking the name,
    /// keys and values ([`Registry::parse`] for a registry with kinds of one's own).
    pub fn parse(spec: &str) -> Result<PolicySpec, SpecError> {
        Registry::builtin().parse(spec)
    }

    /// A spec of built-in kind `name` ([`Registry::from_pairs`]).
    pub fn from_pairs(
        text: impl Into<String>,
        name: &str,
        pairs: Vec<(String, String)>,
    ) -> Result<PolicySpec, SpecError> {
        Registry::builtin().from_pairs(text, name, pairs)
    }

    /// The spec as written (trimmed).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The policy kind.
    pub fn kind(&self) -> &Kind {
        &self.kind
    }

    /// A fresh policy for one conversation.
    pub fn build(&self) -> Box<dyn Policy> {
        super::compact::harnessed((self.builder)())
    }
}

/// The prune policy `prune` and the compaction policy `compaction` run together
/// ([`compact::combine`]), shown as `text`: what `PRUNE+compact:AGENT` and a policies file's
/// `compact` key build.
pub fn combine_specs(text: &str, prune: PolicySpec, compaction: PolicySpec) -> Result<PolicySpec, SpecError> {
    if prune.build().capabilities().compacts || !compaction.build().capabilities().compacts {
        return Err(SpecError::Syntax {
            spec: text.to_owned(),
            message: "expected a prune policy, `+`, then a compaction policy (`opencode+compact:opencode`)"
                .into(),
        });
    }
    let (p, c) = (prune.builder.clone(), compaction.builder.clone());
    let builder = crate::spec::builder(move || compact::combine(p(), c()));
    Ok(PolicySpec { text: text.to_owned(), kind: prune.kind, params: prune.params, builder })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Edit, View};
    use crate::spec::{Param, builder};

    /// A policy of a library user's own: prunes nothing, remembers its typed parameter.
    struct Mine;

    impl Policy for Mine {
        fn before_request(&mut self, _view: &View<'_>, _edits: &mut Vec<Edit>) {}
    }

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct MineParams {
        depth: u32,
    }

    const MINE: Kind = Kind {
        name: "mine",
        about: "a policy registered by a library user",
        source: "this test",
        params: &[Param { key: "depth", default: "2", about: "how deep" }],
        build: |p| {
            let MineParams { depth } = p.typed()?;
            p.at_least("depth", depth, 1)?;
            Ok(builder(|| Box::new(Mine) as Box<dyn Policy>))
        },
    };

    #[test]
    fn a_registered_kind_is_named_in_specs_and_policy_files_like_a_builtin() {
        let mut kinds = Registry::builtin();
        kinds.register(MINE);
        let spec = kinds.parse("mine:depth=3").unwrap();
        assert_eq!((spec.as_str(), spec.kind().name), ("mine:depth=3", "mine"));
        let _ = spec.build();
        let e = kinds.parse("mine:depth=0").unwrap_err().to_string();
        assert_eq!(e, "bad value for `depth` in `mine:depth=0`: must be at least 1, got 0");
        let e = kinds.parse("mine:depth=deep").unwrap_err().to_string();
        assert_eq!(e, "bad value for `depth` in `mine:depth=deep`: `deep`: invalid digit found in string");
        let text = "[[policy]]\nkind = \"mine\"\ndepth = 4\n\n[[policy]]\nkind = \"none\"\n";
        let specs = crate::policy::file::parse_with(&kinds, text, std::path::Path::new("p.toml")).unwrap();
        let labels: Vec<&str> = specs.iter().map(PolicySpec::as_str).collect();
        assert_eq!(labels, ["mine:depth=4", "none"]);
        // The built-in registry does not know it.
        assert!(PolicySpec::parse("mine").unwrap_err().to_string().starts_with("unknown policy `mine`"));
    }

    #[test]
    fn typed_values_give_the_messages_of_their_types() {
        let e = |spec: &str| PolicySpec::parse(spec).unwrap_err().to_string();
        assert_eq!(
            e("anthropic:trigger_type=turns"),
            "bad value for `trigger_type` in `anthropic:trigger_type=turns`: `turns`: expected input_tokens or tool_uses"
        );
        assert_eq!(
            e("gemini:on=all"),
            "bad value for `on` in `gemini:on=all`: `all`: expected output or content"
        );
        assert_eq!(
            e("openclaw:sticky=yes"),
            "bad value for `sticky` in `openclaw:sticky=yes`: `yes`: provided string was not `true` or `false`"
        );
        assert_eq!(
            e("openclaw:soft_trim_ratio=1.5"),
            "bad value for `soft_trim_ratio` in `openclaw:soft_trim_ratio=1.5`: must be a fraction from 0 to 1, got `1.5`"
        );
        assert_eq!(
            e("claude-code-micro:gap=soon"),
            "bad value for `gap` in `claude-code-micro:gap=soon`: `soon`: expected a duration such as 500ms, 30s, 5m, 5min, 1.5h, 1h30m or 2d (a bare number is in minutes)"
        );
    }
}
