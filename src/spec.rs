//! Specs of policies and transforms: `name:key=value,...`, their parameters and kinds.
//!
//! A policy and a record-time transform are named and parameterised the same way, so the parsing
//! of their parameters and the generic [`Kind`] (a name, declared [`Param`]s, a source and a
//! constructor) live here, below both: `policy` and `transform` build on this module and it knows
//! neither.
//!
//! A spec's values are text (`n=5`, `exclude_tools=Read,Bash`, `ttl=5m`), and so are a policies
//! file's once written as the spec they amount to (that text is the policy's label in reports), so
//! both go through this one path: `split_pairs`, `fill_params` (defaults from the kind's
//! listing, unknown keys refused), then [`Params::typed`], whose deserializer parses each value as
//! the field's type asks — a number with that type's `FromStr`, a list split at commas, an enum
//! from its variant names — and names the key in any error. Nothing here prints or reads files.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::str::FromStr;
use std::sync::Arc;

use serde::de::value::{BorrowedStrDeserializer, SeqDeserializer};
use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::{Deserialize, Deserializer};

use crate::error::SpecError;
use crate::time::Millis;

/// Parameters of a spec: key → value text, defaults filled in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params {
    spec: String,
    values: BTreeMap<&'static str, String>,
}

impl Params {
    /// The parameters read into `T`, a kind's parameter struct (one field per declared key,
    /// `#[serde(deny_unknown_fields)]`); an error names the key and the spec.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T, SpecError> {
        T::deserialize(self).map_err(|e| match e.key {
            Some(key) => self.bad(key, e.message),
            None => SpecError::Syntax { spec: self.spec.clone(), message: e.message },
        })
    }

    /// `value` of `key` if it is at least `min`, else an error saying so.
    pub fn at_least<T: PartialOrd + Display>(&self, key: &str, value: T, min: T) -> Result<T, SpecError> {
        if value < min {
            return Err(self.bad(key, format!("must be at least {min}, got {value}")));
        }
        Ok(value)
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
}

/// Parses `500ms`, `30s`, `5m`, `1h` (a decimal number and a unit; a bare number is in
/// `bare_unit`) into milliseconds.
///
/// Kept by hand rather than `humantime::parse_duration`, which refuses two forms accepted here and
/// in use (a decimal such as `1.5h`, a bare number in the parameter's unit) and accepts others
/// refused here (`5 min`, `1h 30m`): the accepted forms would change.
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

/// Splits `key=value,key=value` into pairs. An item without `=` continues the previous value, so
/// list values read naturally (`exclude_tools=Read,Bash,keep=3`). A key given twice is an error.
pub(crate) fn split_pairs(spec: &str, rest: &str) -> Result<Vec<(String, String)>, SpecError> {
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
pub(crate) fn fill_params(
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

/// Why a value did not deserialize: the key (set by the map it was read from) and the message.
#[derive(Debug)]
pub struct ParamError {
    key: Option<&'static str>,
    message: String,
}

impl Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParamError {}

impl de::Error for ParamError {
    fn custom<T: Display>(msg: T) -> Self {
        ParamError { key: None, message: msg.to_string() }
    }
}

/// The parameters as a map of key to value text, for a parameter struct to deserialize from.
struct Pairs<'a> {
    iter: std::collections::btree_map::Iter<'a, &'static str, String>,
    value: Option<(&'static str, &'a str)>,
}

impl<'de> de::MapAccess<'de> for Pairs<'de> {
    type Error = ParamError;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, ParamError> {
        let Some((key, value)) = self.iter.next() else { return Ok(None) };
        self.value = Some((key, value));
        seed.deserialize(BorrowedStrDeserializer::new(key)).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, ParamError> {
        let (key, text) = self.value.take().ok_or_else(|| de::Error::custom("a value without a key"))?;
        seed.deserialize(Text(text)).map_err(|mut e| {
            e.key.get_or_insert(key);
            e
        })
    }
}

impl<'de> Deserializer<'de> for &'de Params {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_map(Pairs { iter: self.values.iter(), value: None })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum identifier ignored_any
    }
}

/// One value's text, parsed as the field reading it asks.
struct Text<'a>(&'a str);

impl Text<'_> {
    /// The text parsed by `T`'s `FromStr`, the error quoting the text (`` `three`: invalid digit ``).
    fn parse<T: FromStr>(&self) -> Result<T, ParamError>
    where
        T::Err: Display,
    {
        self.0.parse().map_err(|e| de::Error::custom(format!("`{}`: {e}", self.0)))
    }
}

/// `deserialize_$method` parses the text as `$ty` and hands it to `visit_$ty`.
macro_rules! parse_as {
    ($($method:ident $ty:ty => $visit:ident),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
            visitor.$visit(self.parse::<$ty>()?)
        })*
    };
}

impl<'de> Deserializer<'de> for Text<'de> {
    type Error = ParamError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        visitor.visit_borrowed_str(self.0)
    }

    parse_as! {
        deserialize_bool bool => visit_bool,
        deserialize_u8 u8 => visit_u8,
        deserialize_u16 u16 => visit_u16,
        deserialize_u32 u32 => visit_u32,
        deserialize_u64 u64 => visit_u64,
        deserialize_i8 i8 => visit_i8,
        deserialize_i16 i16 => visit_i16,
        deserialize_i32 i32 => visit_i32,
        deserialize_i64 i64 => visit_i64,
        deserialize_f32 f32 => visit_f32,
        deserialize_f64 f64 => visit_f64,
    }

    /// A comma-separated list (`exclude_tools=Read,Bash`), trimmed, empty items dropped.
    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
        let items = self.0.split(',').map(str::trim).filter(|s| !s.is_empty()).map(Text);
        visitor.visit_seq(SeqDeserializer::new(items))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ParamError> {
        visitor.visit_newtype_struct(self)
    }

    /// A unit variant named by the text; any other text is refused with the names in declaration
    /// order (`` `x`: expected output or content ``).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ParamError> {
        if !variants.contains(&self.0) {
            return Err(de::Error::custom(format!("`{}`: expected {}", self.0, variants.join(" or "))));
        }
        visitor.visit_enum(BorrowedStrDeserializer::new(self.0))
    }

    serde::forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf option unit unit_struct tuple tuple_struct map
        struct identifier ignored_any
    }
}

impl<'de> IntoDeserializer<'de, ParamError> for Text<'de> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

/// A duration parameter whose bare number is in minutes (`ttl=5` is five minutes): `500ms`, `30s`,
/// `5m`, `1.5h` ([`parse_duration_ms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minutes(pub Millis);

impl<'de> Deserialize<'de> for Minutes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <&str>::deserialize(deserializer)?;
        parse_duration_ms(text, "m").map(Minutes).ok_or_else(|| {
            de::Error::custom(format!("`{text}`: expected a duration such as 500ms, 30s, 5m or 1h"))
        })
    }
}

/// A list parameter's items (`exclude_tools=Read,Bash`), trimmed, empty items dropped.
pub type List = Vec<String>;

/// What a kind's constructor makes of checked parameters: a maker of fresh policies (or
/// transforms), each a new one with the parameters read once.
pub type Builder<T> = Arc<dyn Fn() -> Box<T> + Send + Sync>;

/// A policy kind (or a transform kind): its name,
/// parameters, source and constructor.
///
/// A library user registers a policy of their own as a `Kind` in the policy registry: its `build` reads
/// the [`Params`] into the policy's parameter struct ([`Params::typed`]) and returns a [`Builder`].
pub struct Kind<T: ?Sized + 'static> {
    /// Name in specs.
    pub name: &'static str,
    /// One line on what it does.
    pub about: &'static str,
    /// Where the mechanism comes from.
    pub source: &'static str,
    /// Parameters with defaults (the defaults `ctxbudget policies` lists and a spec starts from).
    pub params: &'static [Param],
    /// Reads and checks the parameters, once per spec.
    pub build: fn(&Params) -> Result<Builder<T>, SpecError>,
}

impl<T: ?Sized> Clone for Kind<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T: ?Sized> Copy for Kind<T> {}

impl<T: ?Sized> std::fmt::Debug for Kind<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kind").field("name", &self.name).finish_non_exhaustive()
    }
}

/// `make` as a [`Builder`]: each call a fresh policy (or transform) from parameters read once.
pub fn builder<T: ?Sized>(make: impl Fn() -> Box<T> + Send + Sync + 'static) -> Builder<T> {
    Arc::new(make)
}
