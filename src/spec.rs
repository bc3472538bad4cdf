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

/// Parses a duration into milliseconds: one or more terms of a number (decimals allowed) and a unit
/// with nothing between them (`500ms`, `30s`, `5m`, `5min`, `1.5h`, `1h30m`, `2d`); a bare number
/// is in `bare_unit`, and refused when `bare_unit` is empty.
///
/// The one duration syntax of the command line (`--cache-ttl`, `openclaw:ttl=`,
/// `claude-code-micro:gap=`). Units: `ms`, `s`/`sec`/`secs`/`second(s)`, `m`/`min`/`mins`/`minute(s)`,
/// `h`/`hr`/`hrs`/`hour(s)`, `d`/`day(s)`, as humantime spells them. Kept by hand rather than
/// `humantime::parse_duration`, which refuses two forms in use (a decimal such as `1.5h`, a bare
/// number in the parameter's unit); a space between a number and its unit is refused too (`5 min`),
/// so a value never needs quoting.
pub fn parse_duration_ms(text: &str, bare_unit: &str) -> Option<Millis> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if !bare_unit.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return duration_term(text, bare_unit);
    }
    let mut rest = text.trim_start();
    let mut total: Millis = 0;
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let unit_end = rest[number_end..]
            .find(|c: char| !c.is_ascii_alphabetic())
            .map_or(rest.len(), |i| i + number_end);
        if number_end == 0 || unit_end == number_end {
            return None;
        }
        total = total.checked_add(duration_term(&rest[..number_end], &rest[number_end..unit_end])?)?;
        rest = rest[unit_end..].trim_start();
    }
    Some(total)
}

/// One `number unit` term of a duration, in milliseconds.
fn duration_term(number: &str, unit: &str) -> Option<Millis> {
    let number: f64 = number.parse().ok()?;
    let scale = match unit {
        "ms" | "msec" | "millis" => 1.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000.0,
        "d" | "day" | "days" => 86_400_000.0,
        _ => return None,
    };
    let ms = number * scale;
    (ms.is_finite() && (0.0..=Millis::MAX as f64 / 2.0).contains(&ms)).then_some(ms.round() as Millis)
}

/// What a duration of the command line looks like, for its error messages.
pub const DURATION_FORMS: &str = "a duration such as 500ms, 30s, 5m, 5min, 1.5h, 1h30m or 2d";

/// Parses a cache lifetime (`--cache-ttl`): a duration ([`parse_duration_ms`], no bare number but
/// `0`), or `never` (`None`: the cache never expires).
pub fn parse_ttl_ms(text: &str) -> Result<Option<Millis>, String> {
    match text.trim() {
        "never" => Ok(None),
        "0" => Ok(Some(0)),
        t => parse_duration_ms(t, "")
            .map(Some)
            .ok_or_else(|| format!("`{t}`: expected {DURATION_FORMS}, 0 or never")),
    }
}

/// What a size or count of the command line looks like, for its error messages.
pub const SIZE_FORMS: &str =
    "a whole number, or one with a suffix: K, M, G (x1000: 40k is 40,000) or KiB, MiB, GiB (x1024)";

/// Parses a size or a count: a whole number (`_` may group digits: `100_000`), or a number with a
/// suffix, case-insensitive: `K`/`KB` (x1,000), `M`/`MB` (x1,000,000), `G`/`GB` (x10^9), `KiB`
/// (x1,024), `MiB` (x1,048,576), `GiB` (x2^30), and `B` (x1). A decimal before a suffix is
/// allowed when the result is whole (`1.5k` is 1,500; `1.5` alone is not a count).
///
/// Decision: K is 1,000, as in "a 200k context window" and a disk's `1 KB`: token counts are
/// decimal, and a byte threshold of `1K` reads as 1,000 bytes; the binary units are spelled
/// out (`64KiB` is 65,536 bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let digits = t.replace('_', "");
    let split = digits.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(digits.len());
    let (number, suffix) = digits.split_at(split);
    let bad = || format!("`{t}`: expected {SIZE_FORMS}");
    let scale: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" => return number.parse::<u64>().map_err(|_| bad()),
        "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(bad()),
    };
    if let Ok(whole) = number.parse::<u64>() {
        return whole.checked_mul(scale).ok_or_else(|| format!("`{t}` is too large"));
    }
    let value = number.parse::<f64>().map_err(|_| bad())? * scale as f64;
    if value.fract() != 0.0 || !(0.0..u64::MAX as f64).contains(&value) {
        return Err(format!("`{t}` is not a whole number"));
    }
    Ok(value as u64)
}

/// [`parse_size`] as a `usize`, for clap's `value_parser` (`--threshold 1KiB`).
pub fn parse_size_usize(text: &str) -> Result<usize, String> {
    parse_size(text).and_then(|v| usize::try_from(v).map_err(|_| format!("`{}` is too large", text.trim())))
}

/// Up to `n` of `candidates` closest to `name`, closest first: those equal to it but for case, then
/// those whose normalised Damerau-Levenshtein similarity (case-insensitive) is at least 0.5, or
/// that contain it or are contained in it. Ties keep the candidates' order.
pub fn closest_names<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    n: usize,
) -> Vec<&'a str> {
    let wanted = name.to_lowercase();
    let mut scored: Vec<(f64, usize, &str)> = candidates
        .into_iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let lower = c.to_lowercase();
            let similarity = if lower == wanted {
                2.0
            } else if !wanted.is_empty() && (lower.contains(&wanted) || wanted.contains(&lower)) {
                1.0
            } else {
                strsim::normalized_damerau_levenshtein(&wanted, &lower)
            };
            (similarity >= 0.5).then_some((similarity, i, c))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.dedup_by(|a, b| a.2 == b.2);
    scored.into_iter().take(n).map(|(_, _, c)| c).collect()
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

/// The text as a whole number of type `T`: its `FromStr`, else a size or count with a suffix
/// ([`parse_size`]: `max=40k`). The error is `FromStr`'s, with the forms accepted when the text
/// starts as a number.
fn whole<T: FromStr + TryFrom<u64>>(text: &str) -> Result<T, ParamError>
where
    T::Err: Display,
{
    let e = match text.parse::<T>() {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    if let Some(v) = parse_size(text).ok().and_then(|v| T::try_from(v).ok()) {
        return Ok(v);
    }
    // A number with a suffix not understood (`40x`) is shown the forms; a word (`deep`) is no size.
    let forms = if text.starts_with(|c: char| c.is_ascii_digit()) {
        format!("; expected {SIZE_FORMS}")
    } else {
        String::new()
    };
    Err(de::Error::custom(format!("`{text}`: {e}{forms}")))
}

/// `deserialize_$method` parses the text as `$ty` with [`whole`] and hands it to `visit_$ty`.
macro_rules! whole_as {
    ($($method:ident $ty:ty => $visit:ident),* $(,)?) => {
        $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ParamError> {
            visitor.$visit(whole::<$ty>(self.0)?)
        })*
    };
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
        deserialize_f32 f32 => visit_f32,
        deserialize_f64 f64 => visit_f64,
    }

    whole_as! {
        deserialize_u8 u8 => visit_u8,
        deserialize_u16 u16 => visit_u16,
        deserialize_u32 u32 => visit_u32,
        deserialize_u64 u64 => visit_u64,
        deserialize_i8 i8 => visit_i8,
        deserialize_i16 i16 => visit_i16,
        deserialize_i32 i32 => visit_i32,
        deserialize_i64 i64 => visit_i64,
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
/// `5m`, `5min`, `1.5h`, `1h30m` ([`parse_duration_ms`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Minutes(pub Millis);

impl<'de> Deserialize<'de> for Minutes {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <&str>::deserialize(deserializer)?;
        parse_duration_ms(text, "m").map(Minutes).ok_or_else(|| {
            de::Error::custom(format!("`{text}`: expected {DURATION_FORMS} (a bare number is in minutes)"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_humantime_units_compounds_and_a_bare_number_in_the_given_unit() {
        assert_eq!(parse_duration_ms("5min", "m"), Some(300_000));
        assert_eq!(parse_duration_ms("5minutes", "m"), Some(300_000));
        assert_eq!(parse_duration_ms("1h30m", "m"), Some(5_400_000));
        assert_eq!(parse_duration_ms("1h 30m", "m"), Some(5_400_000));
        assert_eq!(parse_duration_ms("2d", "m"), Some(172_800_000));
        assert_eq!(parse_duration_ms("1.5h", "m"), Some(5_400_000));
        assert_eq!(parse_duration_ms("7", "s"), Some(7_000));
        assert_eq!(parse_duration_ms("7", ""), None);
        for refused in ["5 min", "5x", "m", "-5m", "", "5m-"] {
            assert_eq!(parse_duration_ms(refused, "m"), None, "{refused}");
        }
    }

    #[test]
    fn a_cache_ttl_is_a_duration_zero_or_never() {
        assert_eq!(parse_ttl_ms("5min"), Ok(Some(300_000)));
        assert_eq!(parse_ttl_ms("5m"), Ok(Some(300_000)));
        assert_eq!(parse_ttl_ms("0"), Ok(Some(0)));
        assert_eq!(parse_ttl_ms("never"), Ok(None));
        let e = parse_ttl_ms("5").unwrap_err();
        assert!(e.contains("5min") && e.contains("never"), "{e}");
    }

    #[test]
    fn sizes_take_decimal_k_m_g_and_binary_kib_mib_gib() {
        assert_eq!(parse_size("40k"), Ok(40_000));
        assert_eq!(parse_size("1KB"), Ok(1_000));
        assert_eq!(parse_size("1KiB"), Ok(1_024));
        assert_eq!(parse_size("64kib"), Ok(65_536));
        assert_eq!(parse_size("2M"), Ok(2_000_000));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("1.5k"), Ok(1_500));
        assert_eq!(parse_size("100_000"), Ok(100_000));
        assert_eq!(parse_size("512B"), Ok(512));
        assert!(parse_size("1.5").is_err());
        assert!(parse_size("1.0001k").unwrap_err().contains("not a whole number"));
        assert!(parse_size("99999999999G").unwrap_err().contains("too large"));
        let e = parse_size("3 apples").unwrap_err();
        assert!(e.contains("KiB") && e.contains("40k"), "{e}");
    }

    #[test]
    fn the_closest_names_come_first_case_first() {
        let tools = ["Bash", "Read", "Grep", "read_file", "WebFetch"];
        assert_eq!(closest_names("read", tools, 3), ["Read", "read_file"]);
        assert_eq!(closest_names("keep-turn", ["none", "keep-turns", "keep-results"], 3)[0], "keep-turns");
        assert!(closest_names("zzzz", tools, 3).is_empty());
    }

    #[derive(Debug, Deserialize)]
    struct Counts {
        max: u64,
        keep: usize,
    }

    #[test]
    fn whole_number_parameters_take_size_suffixes() {
        let params = Params {
            spec: "x:max=40k,keep=3".into(),
            values: [("max", "40k".to_owned()), ("keep", "3".to_owned())].into_iter().collect(),
        };
        let counts: Counts = params.typed().unwrap();
        assert_eq!((counts.max, counts.keep), (40_000, 3));
        let with_max = |max: &str| Params {
            values: [("max", max.to_owned()), ("keep", "1".to_owned())].into_iter().collect(),
            ..params.clone()
        };
        let e = with_max("40x").typed::<Counts>().unwrap_err().to_string();
        assert!(e.contains("`40x`") && e.contains("40k is 40,000"), "{e}");
        // A word is no size: its error is the number's own.
        let e = with_max("lots").typed::<Counts>().unwrap_err().to_string();
        assert!(e.ends_with("`lots`: invalid digit found in string"), "{e}");
    }
}
