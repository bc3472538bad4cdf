//! Specs of policies and transforms: `name:key=value,...`, their parameters and kinds.
//!
//! A policy and a record-time transform are named and parameterised the same way, so the parsing
//! of `key=value` pairs, the checked parameter map and the kind table live here, below both:
//! `policy` and `transform` build on this module and it knows neither. Pure: no I/O.

use std::collections::BTreeMap;

use crate::error::SpecError;
use crate::time::Millis;

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

    /// The spec these parameters were given in (trimmed).
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// The raw text of `key` (empty when it has no default and was not given).
    pub fn text(&self, key: &str) -> &str {
        self.values.get(key).map(String::as_str).unwrap_or("")
    }

    /// A comma-separated list (`exclude_tools=Read,Bash`), trimmed, empty items dropped.
    pub fn list(&self, key: &str) -> Vec<String> {
        self.text(key).split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
    }

    /// A duration such as `500ms`, `30s`, `5m` or `1h`; a bare number is in `bare_unit`.
    pub fn duration_ms(&self, key: &str, bare_unit: &str) -> Result<Millis, SpecError> {
        parse_duration_ms(self.text(key), bare_unit).ok_or_else(|| {
            self.bad(key, format!("`{}`: expected a duration such as 500ms, 30s, 5m or 1h", self.text(key)))
        })
    }
}

/// Parses `500ms`, `30s`, `5m`, `1h` (a decimal number and a unit; a bare number is in
/// `bare_unit`) into milliseconds.
pub fn parse_duration_ms(text: &str, bare_unit: &str) -> Option<Millis> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let unit = if unit.is_empty() { bare_unit } else { unit.trim() };
    let scale = match unit {
        "ms" => 1.0,
        "s" => 1_000.0,
        "m" => 60_000.0,
        "h" => 3_600_000.0,
        _ => return None,
    };
    let ms = number * scale;
    (ms.is_finite() && ms >= 0.0).then_some(ms.round() as Millis)
}

/// One parameter of a policy or a transform.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Key in the spec.
    pub key: &'static str,
    /// Default value.
    pub default: &'static str,
    /// What it means.
    pub about: &'static str,
}

/// A policy or transform kind: its name, parameters, source and constructor (`T` is the trait
/// object it builds).
pub struct Kind<T: ?Sized + 'static> {
    /// Name in specs.
    pub name: &'static str,
    /// One line on what it does.
    pub about: &'static str,
    /// Where the mechanism comes from.
    pub source: &'static str,
    /// Parameters with defaults.
    pub params: &'static [Param],
    /// Builds a policy (or a transform) from checked parameters.
    pub build: fn(&Params) -> Result<Box<T>, SpecError>,
}

/// Splits `key=value,key=value` into pairs. An item without `=` continues the previous value, so
/// list values read naturally (`exclude_tools=Read,Bash,keep=3`). A key given twice is an error.
pub fn split_pairs(spec: &str, rest: &str) -> Result<Vec<(String, String)>, SpecError> {
    if rest.trim().is_empty() {
        return Err(SpecError::Syntax { spec: spec.to_owned(), message: "nothing after `:`".into() });
    }
    let mut pairs: Vec<(String, String)> = Vec::new();
    for item in rest.split(',') {
        if let Some((key, _)) = item.split_once('=').filter(|(k, _)| pairs.iter().any(|(p, _)| p == k.trim()))
        {
            // The last one would win under a label that shows the first.
            return Err(SpecError::Syntax {
                spec: spec.to_owned(),
                message: format!("`{}` is given twice", key.trim()),
            });
        }
        match (item.split_once('='), pairs.last_mut()) {
            (Some((key, value)), _) => pairs.push((key.trim().to_owned(), value.trim().to_owned())),
            (None, Some((_, value))) => {
                value.push(',');
                value.push_str(item.trim());
            }
            (None, None) => {
                return Err(SpecError::Syntax {
                    spec: spec.to_owned(),
                    message: format!("`{}` is not key=value", item.trim()),
                });
            }
        }
    }
    Ok(pairs)
}

/// Fills `params` with their defaults and then `pairs`, checking every key; `unknown` builds the
/// error for a key that is not a parameter (its arguments: the key, the valid keys).
pub fn fill_params(
    spec: &str,
    params: &'static [Param],
    pairs: Vec<(String, String)>,
    unknown: impl Fn(String, String) -> SpecError,
) -> Result<Params, SpecError> {
    let mut values: BTreeMap<&'static str, String> =
        params.iter().map(|p| (p.key, p.default.to_owned())).collect();
    for (key, value) in pairs {
        let Some(param) = params.iter().find(|p| p.key == key) else {
            let valid = if params.is_empty() {
                "none".to_owned()
            } else {
                params.iter().map(|p| p.key).collect::<Vec<_>>().join(", ")
            };
            return Err(unknown(key, valid));
        };
        values.insert(param.key, value);
    }
    Ok(Params { spec: spec.to_owned(), values })
}
