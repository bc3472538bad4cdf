//! Policies named and configured in a TOML file (`replay --policies FILE`).
//!
//! The file holds one `[[policy]]` table per policy: `kind` is a name from `ctxbudget policies`,
//! the optional `name` is the label reports show (default: the spec the table amounts to), and
//! every other key is a parameter of that kind. Values may be strings, integers, floats, booleans
//! or lists of those (a list is a comma-separated value: `exclude_tools = ["Read", "Bash"]`). Each
//! table goes through the same checks as a `--policy` spec, and a mistake names the file, the
//! table and the key. Pure: the caller reads the file (the input layer's `read_policies`).
//! [`parse_with`] reads a file naming kinds a library user registered ([`Registry::register`]).
//! The values become the text a `--policy` spec would give (that text labels the policy in reports)
//! and go through the same typed reading ([`super::Params::typed`]).
//!
//! ```toml
//! [[policy]]
//! kind = "opencode"
//! name = "opencode-20k"
//! protect = 20000
//! minimum = 10000
//!
//! [[policy]]
//! kind = "anthropic"
//! clear_at_least = 20000
//! exclude_tools = ["Read", "Grep"]
//! ```

use std::collections::BTreeSet;
use std::path::Path;

use toml::Value;

use super::spec::combine_specs;
use super::{PolicySpec, Registry};
use crate::error::{PolicyFileError, SpecError};

/// A TOML error as `line L, column C: message`, without the crate's excerpt of the line (which
/// would print a line of any length: a 200 KB line was echoed whole).
fn where_and_why(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end();
    let Some(at) = e.span().map(|s| s.start.min(text.len())) else { return message.to_owned() };
    let before = text.get(..at).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("line {line}, column {column}: {message}")
}

/// Parses the policies of a file whose text is `text` (`path` names it in errors), of the
/// built-in kinds.
pub fn parse(text: &str, path: &Path) -> Result<Vec<PolicySpec>, PolicyFileError> {
    parse_with(&Registry::builtin(), text, path)
}

/// Parses the policies of a file whose text is `text` (`path` names it in errors), of the kinds
/// in `kinds` (the built-ins and any a library user registered).
pub fn parse_with(kinds: &Registry, text: &str, path: &Path) -> Result<Vec<PolicySpec>, PolicyFileError> {
    let shape = |message: String| PolicyFileError::Shape { path: path.to_owned(), message };
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| shape(format!("not valid TOML: {}", where_and_why(text, &e))))?;
    if let Some(key) = table.keys().find(|k| *k != "policy") {
        return Err(shape(format!("unknown top-level key `{key}`; the file holds [[policy]] tables")));
    }
    let Some(policies) = table.get("policy") else {
        return Err(shape("no [[policy]] table".into()));
    };
    let Some(policies) = policies.as_array() else {
        return Err(shape("`policy` must be an array of tables: write each one as [[policy]]".into()));
    };
    let mut labels = BTreeSet::new();
    let mut specs = Vec::with_capacity(policies.len());
    for (i, entry) in policies.iter().enumerate() {
        let number = i + 1;
        let spec_error = |source: SpecError| PolicyFileError::Spec {
            path: path.to_owned(),
            number,
            source: Box::new(source),
        };
        let Some(entry) = entry.as_table() else {
            return Err(shape(format!("policy #{number} is not a table: write it as [[policy]]")));
        };
        let Some(kind) = entry.get("kind").and_then(Value::as_str) else {
            return Err(shape(format!(
                "policy #{number} has no `kind` (a string naming one of: {})",
                kinds.kinds().iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
            )));
        };
        let name = match entry.get("name") {
            None => None,
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Some(_) => {
                return Err(shape(format!("policy #{number} (`{kind}`): `name` must be a non-empty string")));
            }
        };
        // Parameters in the order the kind declares them, then any unknown key (an error below).
        let declared: Vec<&str> =
            kinds.get(kind).map_or(Vec::new(), |k| k.params.iter().map(|p| p.key).collect());
        let mut keys: Vec<&String> =
            entry.keys().filter(|k| !["kind", "name", "compact"].contains(&k.as_str())).collect();
        keys.sort_by_key(|k| declared.iter().position(|d| d == k).unwrap_or(usize::MAX));
        let mut pairs = Vec::with_capacity(keys.len());
        for key in keys {
            // Lists become comma-separated text: an item with a comma would become two items.
            let items = entry[key.as_str()].as_array().map_or(&[][..], Vec::as_slice);
            if let Some(item) = items.iter().filter_map(Value::as_str).find(|i| i.contains(',')) {
                return Err(shape(format!(
                    "policy #{number} (`{kind}`): `{key}`: the list item `{item}` holds a comma, which \
                     separates items; name each item without one"
                )));
            }
            let value = value_text(&entry[key.as_str()]).ok_or_else(|| {
                shape(format!(
                    "policy #{number} (`{kind}`): `{key}` must be a string, number, boolean or list of those"
                ))
            })?;
            pairs.push((key.clone(), value));
        }
        let compaction =
            compaction_of(entry).map_err(|m| shape(format!("policy #{number} (`{kind}`): {m}")))?;
        let prune_text = if pairs.is_empty() {
            kind.to_owned()
        } else {
            let params: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={v}")).collect();
            format!("{kind}:{}", params.join(","))
        };
        let spec_text = compaction.map_or_else(|| prune_text.clone(), |c| format!("{prune_text}+{c}"));
        let label = name.unwrap_or(spec_text);
        if !labels.insert(label.clone()) {
            return Err(shape(format!(
                "policy #{number}: `{label}` is already the name of an earlier policy"
            )));
        }
        specs.push(match compaction {
            Some(c) => {
                let prune = kinds.from_pairs(prune_text, kind, pairs).map_err(spec_error)?;
                combine_specs(&label, prune, kinds.parse(c).map_err(spec_error)?).map_err(spec_error)?
            }
            None => kinds.from_pairs(label, kind, pairs).map_err(spec_error)?,
        });
    }
    Ok(specs)
}

/// The compaction policy a table's `compact` key names (`compact = "compact:opencode"`, any
/// `compact:AGENT[:key=value,...]` spec), run together with the table's prune policy as
/// `PRUNE+compact:AGENT` runs them.
fn compaction_of(entry: &toml::Table) -> Result<Option<&str>, String> {
    match entry.get("compact") {
        None => Ok(None),
        Some(Value::String(s)) if s.starts_with("compact:") => Ok(Some(s.as_str())),
        Some(_) => Err("`compact` must be a compaction policy spec such as \"compact:opencode\"".into()),
    }
}

/// A TOML value as the text a spec would give it.
fn value_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Integer(n) => Some(n.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Boolean(b) => Some(b.to_string()),
        Value::Array(items) => {
            let items: Option<Vec<String>> =
                items.iter().map(|v| if v.is_array() { None } else { value_text(v) }).collect();
            Some(items?.join(","))
        }
        Value::Datetime(_) | Value::Table(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Vec<PolicySpec>, PolicyFileError> {
        parse(text, Path::new("policies.toml"))
    }

    #[test]
    fn a_compact_key_runs_the_prune_policy_with_a_compaction_policy_as_plus_does() {
        let specs = parse_str(
            "[[policy]]\nkind = \"keep-turns\"\nn = 3\ncompact = \"compact:opencode\"\n\n\
             [[policy]]\nkind = \"opencode\"\nname = \"both\"\ncompact = \"compact:claude-code\"\n",
        )
        .unwrap();
        let texts: Vec<&str> = specs.iter().map(|s| s.as_str()).collect();
        assert_eq!(texts, ["keep-turns:n=3+compact:opencode", "both"]);
        assert!(specs.iter().all(|s| s.build().capabilities().compacts));
        let plus = PolicySpec::parse("keep-turns:n=3+compact:opencode").unwrap();
        assert_eq!((plus.kind().name, &plus.params), (specs[0].kind().name, &specs[0].params));
        // Not a compaction spec, or a compaction policy as the prune policy: named errors.
        let e = parse_str("[[policy]]\nkind = \"keep-turns\"\ncompact = 3\n").unwrap_err().to_string();
        assert!(e.contains("policy #1 (`keep-turns`): `compact` must be a compaction policy spec"), "{e}");
        let e = parse_str("[[policy]]\nkind = \"compact:codex\"\ncompact = \"compact:opencode\"\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected a prune policy"), "{e}");
    }

    #[test]
    fn a_list_item_holding_a_comma_is_refused_not_split() {
        let e = parse_str("[[policy]]\nkind = \"anthropic\"\nexclude_tools = [\"Read,Bash\", \"Grep\"]\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("the list item `Read,Bash` holds a comma, which separates items"), "{e}");
    }

    #[test]
    fn a_good_file_gives_its_policies_in_order_with_their_names() {
        let specs = parse_str(
            r#"
            [[policy]]
            kind = "opencode"
            name = "opencode-20k"
            minimum = 10000
            protect = 20000

            [[policy]]
            kind = "anthropic"
            clear_at_least = 20000
            exclude_tools = ["Read", "Grep"]
            sticky = true

            [[policy]]
            kind = "openclaw"
            soft_trim_ratio = 0.25
            ttl = "1h"

            [[policy]]
            kind = "none"
            "#,
        )
        .unwrap();
        let labels: Vec<&str> = specs.iter().map(PolicySpec::as_str).collect();
        assert_eq!(
            labels,
            [
                "opencode-20k",
                "anthropic:clear_at_least=20000,exclude_tools=Read,Grep,sticky=true",
                "openclaw:ttl=1h,soft_trim_ratio=0.25",
                "none",
            ]
        );
        assert_eq!(specs[0].kind().name, "opencode");
        assert_eq!(specs[1].params.text("exclude_tools"), "Read,Grep");
        assert_eq!(specs[0].params.text("protect"), "20000");
    }

    #[test]
    fn an_unknown_policy_names_the_file_and_the_table() {
        let e = parse_str("[[policy]]\nkind = \"opencode\"\n\n[[policy]]\nkind = \"cline\"\n").unwrap_err();
        let e = e.to_string();
        assert!(
            e.starts_with(
                "policies.toml: policy #2: unknown policy `cline` in `cline`; valid policies: none,"
            ),
            "{e}"
        );
    }

    #[test]
    fn a_bad_value_names_the_file_and_the_key() {
        let e = parse_str("[[policy]]\nkind = \"opencode\"\nprotect = \"lots\"\n").unwrap_err().to_string();
        assert!(
            e.starts_with(
                "policies.toml: policy #1: bad value for `protect` in `opencode:protect=lots`: `lots`"
            ),
            "{e}"
        );
        let e = parse_str("[[policy]]\nkind = \"gemini\"\nprotect_turns = 2\n").unwrap_err().to_string();
        assert!(
            e.contains("policies.toml: policy #1: policy `gemini` has no parameter `protect_turns`"),
            "{e}"
        );
        let e = parse_str("[[policy]]\nkind = \"gemini\"\nprotect = { a = 1 }\n").unwrap_err().to_string();
        assert_eq!(
            e,
            "policies.toml: policy #1 (`gemini`): `protect` must be a string, number, boolean or list of those"
        );
    }

    #[test]
    fn shape_mistakes_say_what_the_file_should_hold() {
        let e = parse_str("kind = \"none\"").unwrap_err().to_string();
        assert_eq!(e, "policies.toml: unknown top-level key `kind`; the file holds [[policy]] tables");
        let e = parse_str("[[policy]]\nname = \"x\"").unwrap_err().to_string();
        assert!(e.starts_with("policies.toml: policy #1 has no `kind`"), "{e}");
        let e = parse_str("[[policy]\n").unwrap_err().to_string();
        assert!(e.starts_with("policies.toml: not valid TOML"), "{e}");
        let e =
            parse_str("[[policy]]\nkind = \"none\"\n[[policy]]\nkind = \"none\"\n").unwrap_err().to_string();
        assert!(e.contains("`none` is already the name of an earlier policy"), "{e}");
        assert!(parse_str("").unwrap_err().to_string().ends_with("no [[policy]] table"));
    }
}
