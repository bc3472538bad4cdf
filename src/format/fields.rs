//! Field readers for the typed records of the importers that used to walk `serde_json::Value`
//! trees (`codex-exec`, `codex-legacy`, `cline`, `opencode`, `inspect`): a record names only the
//! keys its importer reads, each kept as the JSON value it holds ([`present`]), so a line or a
//! document is checked as JSON whole but only those values are built. Reading a kept value with
//! [`str_of`] or `Value`'s own accessors gives what `Value::get(key)` gave on the whole tree: a
//! field of an unexpected type reads as absent, `null` as present. The one difference: a key given
//! twice in one object is an error (a `Value` kept the last one).

use serde::de::{self, DeserializeOwned, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::claude_code::Object;

/// A field present with any JSON value, kept as it is (`null` included); absent is `None`.
pub(crate) fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// The field's string, or empty when it is absent or not a string.
pub(crate) fn str_of(v: &Option<Value>) -> &str {
    v.as_ref().and_then(Value::as_str).unwrap_or("")
}

/// The field's string moved out, or empty when it is absent or not a string.
pub(crate) fn take_str(v: &mut Option<Value>) -> String {
    match v.take() {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A value that should be a list of records or a string: a list's elements read as `T` (one that
/// is not an object as `T::default()`), any other JSON value kept whole (it is rare: an error, or
/// text as its JSON). Absent is [`Shape::Absent`].
#[derive(Default)]
pub(crate) enum Shape<T> {
    #[default]
    Absent,
    Text(String),
    List(Vec<T>),
    Other(Value),
}

impl<T> Shape<T> {
    /// What the value is, in the words of [`super::wire::kind_of`].
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Shape::Absent => "nothing",
            Shape::Text(_) => "a string",
            Shape::List(_) => "an array",
            Shape::Other(v) => super::wire::kind_of(v),
        }
    }
}

impl<'de, T: DeserializeOwned + Default> Deserialize<'de> for Shape<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Shape<T>, D::Error> {
        d.deserialize_any(ShapeVisitor(std::marker::PhantomData))
    }
}

struct ShapeVisitor<T>(std::marker::PhantomData<T>);

impl<'de, T: DeserializeOwned + Default> Visitor<'de> for ShapeVisitor<T> {
    type Value = Shape<T>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Shape<T>, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Object(element)) = seq.next_element::<Object<T>>()? {
            list.push(element.unwrap_or_default());
        }
        Ok(Shape::List(list))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Shape<T>, E> {
        Ok(Shape::Text(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Shape<T>, E> {
        Ok(Shape::Text(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Shape<T>, A::Error> {
        Value::deserialize(de::value::MapAccessDeserializer::new(map)).map(Shape::Other)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Shape<T>, E> {
        Ok(Shape::Other(Value::Bool(v)))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Shape<T>, E> {
        Ok(Shape::Other(v.into()))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Shape<T>, E> {
        Ok(Shape::Other(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Shape<T>, E> {
        Ok(Shape::Other(v.into()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Shape<T>, E> {
        Ok(Shape::Other(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default, Deserialize)]
    #[serde(default)]
    struct R {
        #[serde(deserialize_with = "present")]
        a: Option<Value>,
    }

    #[test]
    fn a_kept_field_reads_as_value_get_did() {
        let r = |s: &str| serde_json::from_str::<R>(s).unwrap().a;
        assert_eq!(r("{}"), None);
        assert_eq!(r(r#"{"a":null}"#), Some(Value::Null));
        assert_eq!(str_of(&r(r#"{"a":"x","b":[1]}"#)), "x");
        assert_eq!(str_of(&r(r#"{"a":1}"#)), "");
        assert_eq!(take_str(&mut r(r#"{"a":"y"}"#)), "y");
        assert!(serde_json::from_str::<R>(r#"{"a":1,"a":2}"#).is_err());
    }

    #[test]
    fn a_shape_keeps_lists_and_strings_and_names_other_types() {
        let shape = |s: &str| serde_json::from_str::<Shape<R>>(s).unwrap();
        let Shape::List(list) = shape(r#"[{"a":"x"},5,{"b":1}]"#) else { panic!() };
        let got: Vec<&str> = list.iter().map(|r| str_of(&r.a)).collect();
        assert_eq!(got, ["x", "", ""]);
        assert!(matches!(shape(r#""t""#), Shape::Text(t) if t == "t"));
        for (json, kind) in [
            ("null", "null"),
            ("1", "a number"),
            ("-1.5", "a number"),
            ("true", "a boolean"),
            ("{}", "an object"),
        ] {
            let s = shape(json);
            let value: Value = serde_json::from_str(json).unwrap();
            assert!(matches!(&s, Shape::Other(v) if *v == value), "{json}");
            assert_eq!(s.kind(), kind);
        }
    }
}
