//! Prune policies: what to remove from the context before each LLM request.
//!
//! A policy sees a [`View`] of the context just before a request (the tool results still in it, with
//! their sizes, age in requests and human turns, and the context total) and answers with [`Edit`]s:
//! remove a result's content (the seed's prune: the summary stays), or put some text in its place
//! (a placeholder or a preview). A *sticky* policy's edits persist, as in the seed (once content is
//! `None` it stays so); a non-sticky policy is asked afresh for every request and its edits apply to
//! that request only, the way an API that edits the request copy behaves.
//!
//! Policies are parsed from `name:key=value,...` specs ([`PolicySpec::parse`]) against the
//! [`registry`], which lists every policy with its parameters, defaults and source. A spec builds a
//! fresh policy per conversation. Policies decide with the counter in [`Measure::decide`]; reports
//! always show real tokens. One file per policy; nothing here prints or does I/O.

pub mod budget;
pub mod keep_results;
pub mod keep_turns;
pub mod none;

use std::collections::BTreeMap;

use crate::error::SpecError;
use crate::measure::MeasuredResult;
use crate::model::Millis;
use crate::tokens::Measure;

/// The state of a tool result's content in the context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Content {
    /// The result was not split: its summary is the whole output, nothing to prune.
    None,
    /// The content is sent.
    Present(Measure),
    /// The content was replaced by text of this size (a placeholder or a preview).
    Replaced(Measure),
    /// The content was removed; only the summary is sent.
    Pruned,
}

/// A tool result as a policy sees it.
#[derive(Debug, Clone)]
pub struct ResultState<'a> {
    /// Index among all tool results of the conversation (what [`Edit`]s refer to).
    pub index: usize,
    /// The measured result (name, text, sizes).
    pub result: &'a MeasuredResult,
    /// The summary sent for it.
    pub summary: Measure,
    /// Its content's state (persistent state: edits of a non-sticky policy are not reflected).
    pub content: Content,
    /// The content as split, whatever happened to it since.
    pub original: Option<Measure>,
    /// Index of the first request that sent it (requests before `request` have seen it
    /// `request - first_request` times).
    pub first_request: usize,
    /// Human turn during which it was produced (1 = after the first user message).
    pub turn: usize,
    /// Index of the item in the conversation (order of appearance).
    pub position: usize,
    /// Measure of the linked tool call (name + arguments), if the call is in the context.
    pub call: Option<Measure>,
}

impl ResultState<'_> {
    /// Tokens of the result as currently sent (summary + content or replacement).
    pub fn sent(&self) -> Measure {
        let mut m = self.summary;
        match self.content {
            Content::Present(c) | Content::Replaced(c) => m += c,
            Content::None | Content::Pruned => {}
        }
        m
    }

    /// The present content, if any.
    pub fn present(&self) -> Option<Measure> {
        match self.content {
            Content::Present(c) => Some(c),
            _ => None,
        }
    }
}

/// The context just before a request, as a policy sees it.
#[derive(Debug)]
pub struct View<'a> {
    /// Index of this request in the conversation (0-based).
    pub request: usize,
    /// When it is made, if recorded.
    pub timestamp: Option<Millis>,
    /// When the previous request was made, if recorded.
    pub previous_timestamp: Option<Millis>,
    /// Human turns started so far (1 after the first user message).
    pub turn: usize,
    /// Whether a human turn started since the previous request.
    pub turn_start: bool,
    /// Tool results in the context, oldest first (results before a compaction are gone).
    pub results: &'a [ResultState<'a>],
    /// The whole context as currently sent.
    pub context: Measure,
}

impl View<'_> {
    /// The result with conversation-wide index `index`, if it is in the context.
    pub fn result(&self, index: usize) -> Option<&ResultState<'_>> {
        let first = self.results.first()?.index;
        self.results.get(index.checked_sub(first)?)
    }
}

/// A change a policy makes before a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Remove the content of result `index` (the summary stays).
    Prune(usize),
    /// Put `text` in place of the content of result `index`.
    Replace(usize, String),
    /// Replace the arguments of the call linked to result `index` with `text` (the name stays).
    ClearCall(usize, String),
}

/// A prune policy.
pub trait Policy: Send {
    /// Whether edits persist (the seed's prune) or are recomputed for every request.
    fn sticky(&self) -> bool {
        true
    }

    /// Decides what to edit before the request described by `view`, pushing onto `edits`.
    fn before_request(&mut self, view: &View<'_>, edits: &mut Vec<Edit>);
}

/// Parameters of a spec: key → value text, defaults filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    spec: String,
    values: BTreeMap<&'static str, String>,
}

impl Params {
    /// The value of `key` parsed as `T`; an error names the key and the spec.
    pub fn get<T: std::str::FromStr>(&self, key: &str) -> Result<T, SpecError>
    where
        T::Err: std::fmt::Display,
    {
        let text = self.values.get(key).map(String::as_str).unwrap_or("");
        text.parse().map_err(|e: T::Err| SpecError::BadValue {
            spec: self.spec.clone(),
            key: key.to_owned(),
            message: format!("`{text}`: {e}"),
        })
    }

    /// A value that must be at least `min`.
    pub fn at_least<T>(&self, key: &str, min: T) -> Result<T, SpecError>
    where
        T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy,
        T::Err: std::fmt::Display,
    {
        let v: T = self.get(key)?;
        if v < min {
            return Err(self.bad(key, format!("must be at least {min}, got {v}")));
        }
        Ok(v)
    }

    /// An error about the value of `key`.
    pub fn bad(&self, key: &str, message: impl Into<String>) -> SpecError {
        SpecError::BadValue { spec: self.spec.clone(), key: key.to_owned(), message: message.into() }
    }
}

/// One parameter of a policy.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Key in the spec.
    pub key: &'static str,
    /// Default value.
    pub default: &'static str,
    /// What it means.
    pub about: &'static str,
}

/// A policy kind: its name, parameters, source and constructor.
pub struct Kind {
    /// Name in specs.
    pub name: &'static str,
    /// One line on what it does.
    pub about: &'static str,
    /// Where the mechanism comes from.
    pub source: &'static str,
    /// Parameters with defaults.
    pub params: &'static [Param],
    /// Builds a policy from checked parameters.
    pub build: fn(&Params) -> Result<Box<dyn Policy>, SpecError>,
}

/// Every policy kind, in listing order.
pub fn registry() -> &'static [Kind] {
    &[none::KIND, keep_turns::KIND, keep_results::KIND, budget::KIND]
}

/// A parsed, validated policy spec.
pub struct PolicySpec {
    text: String,
    kind: &'static Kind,
    params: Params,
}

impl std::fmt::Debug for PolicySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySpec").field("text", &self.text).field("params", &self.params).finish()
    }
}

impl Clone for PolicySpec {
    fn clone(&self) -> Self {
        PolicySpec { text: self.text.clone(), kind: self.kind, params: self.params.clone() }
    }
}

impl PolicySpec {
    /// Parses `name` or `name:key=value,key=value`, checking the name, keys and values.
    pub fn parse(spec: &str) -> Result<PolicySpec, SpecError> {
        let text = spec.trim().to_owned();
        let (name, rest) = match text.split_once(':') {
            Some((n, r)) => (n.trim(), Some(r)),
            None => (text.as_str(), None),
        };
        let kind = registry().iter().find(|k| k.name == name).ok_or_else(|| SpecError::UnknownName {
            spec: text.clone(),
            name: name.to_owned(),
            valid: registry().iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
        })?;
        let mut values: BTreeMap<&'static str, String> =
            kind.params.iter().map(|p| (p.key, p.default.to_owned())).collect();
        if let Some(rest) = rest {
            if rest.trim().is_empty() {
                return Err(SpecError::Syntax { spec: text.clone(), message: "nothing after `:`".into() });
            }
            for pair in rest.split(',') {
                let (key, value) = pair.split_once('=').ok_or_else(|| SpecError::Syntax {
                    spec: text.clone(),
                    message: format!("`{}` is not key=value", pair.trim()),
                })?;
                let key = key.trim();
                let param =
                    kind.params.iter().find(|p| p.key == key).ok_or_else(|| SpecError::UnknownKey {
                        spec: text.clone(),
                        policy: kind.name.to_owned(),
                        key: key.to_owned(),
                        valid: if kind.params.is_empty() {
                            "none".to_owned()
                        } else {
                            kind.params.iter().map(|p| p.key).collect::<Vec<_>>().join(", ")
                        },
                    })?;
                values.insert(param.key, value.trim().to_owned());
            }
        }
        let params = Params { spec: text.clone(), values };
        (kind.build)(&params)?;
        Ok(PolicySpec { text, kind, params })
    }

    /// The spec as written (trimmed).
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The policy kind.
    pub fn kind(&self) -> &'static Kind {
        self.kind
    }

    /// A fresh policy for one conversation.
    pub fn build(&self) -> Box<dyn Policy> {
        (self.kind.build)(&self.params).unwrap_or_else(|e| unreachable!("checked when parsed: {e}"))
    }
}

/// Results whose content is present, oldest first.
pub fn present<'v>(view: &'v View<'v>) -> impl Iterator<Item = &'v ResultState<'v>> {
    view.results.iter().filter(|r| matches!(r.content, Content::Present(_)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_keys_and_defaults() {
        let s = PolicySpec::parse(" keep-turns:n=5 ").unwrap();
        assert_eq!(s.as_str(), "keep-turns:n=5");
        assert_eq!(s.params.get::<usize>("n").unwrap(), 5);
        let s = PolicySpec::parse("keep-turns").unwrap();
        assert_eq!(s.params.get::<usize>("n").unwrap(), 3);
    }

    #[test]
    fn an_unknown_name_lists_the_valid_ones() {
        let e = PolicySpec::parse("keep-last:n=3").unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown policy `keep-last` in `keep-last:n=3`; valid policies: none, keep-turns, keep-results, budget"
        );
    }

    #[test]
    fn an_unknown_key_lists_the_valid_keys() {
        let e = PolicySpec::parse("budget:max=10,goal=5").unwrap_err().to_string();
        assert_eq!(
            e,
            "policy `budget` has no parameter `goal` (in `budget:max=10,goal=5`); valid keys: max, target"
        );
        let e = PolicySpec::parse("none:x=1").unwrap_err().to_string();
        assert!(e.ends_with("valid keys: none"), "{e}");
    }

    #[test]
    fn a_bad_value_names_the_key() {
        let e = PolicySpec::parse("keep-turns:n=three").unwrap_err().to_string();
        assert!(e.starts_with("bad value for `n` in `keep-turns:n=three`: `three`"), "{e}");
        let e = PolicySpec::parse("budget:max=100,target=200").unwrap_err().to_string();
        assert!(e.contains("target"), "{e}");
    }

    #[test]
    fn malformed_specs_say_what_is_expected() {
        for bad in ["keep-turns:", "keep-turns:n"] {
            let e = PolicySpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("expected `name` or `name:key=value"), "{e}");
        }
    }
}
