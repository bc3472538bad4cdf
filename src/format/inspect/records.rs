//! Typed records of an Inspect log: what [`super`] reads of a sample (`id`, `epoch`, its model
//! events' `event`, `model`, `timestamp`, `input`, `input_refs`, `tools`, `output` and
//! `call.response`, the `message_pool` and the `attachments`) is built; everything else is checked
//! as JSON as it is read but never built. A sample's `messages` (the final transcript, read only
//! when the sample has no model event) are only checked: the sample is read again from its text
//! ([`Source`]) when they are needed.
//!
//! Every `attachment://<hash>` string of the parts not built is noted by its hash, so that the
//! sample's references with no attachment can be counted (the attachments come last in a sample,
//! after the references). Any JSON value is accepted where these records expect another (an event
//! that is not an object reads as an empty event, `events` that are not a list as none), as
//! `Value::get` took them; a key given twice is read from its last value, as a tree keeps it, but
//! the references in its earlier values are noted too: a count above zero is made again on the
//! tree ([`Source`]), which only references with no attachment need.
//! Errors are the tree's to the byte: text that is not JSON is parsed again as a `Value` tree,
//! whose error is the one reported ([`parse`]).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

use crate::error::TraceError;
use crate::format::shared::{parse_document, parse_document_as};

/// Parses `text` (the file or zip entry `path`) as `T`. Text that is not JSON is parsed again as a
/// `Value` tree, and the tree's error is returned: the same error, line and column as before these
/// records (the typed read stops where the tree would, but words some errors its own way).
pub(in crate::format) fn parse<'a, T: Deserialize<'a>>(text: &'a str, path: &Path) -> Result<T, TraceError> {
    parse_document_as(text, path).map_err(|typed| parse_document(text, path).err().unwrap_or(typed))
}

/// One sample, as [`super::read_sample_into`] reads it.
#[derive(Default)]
pub(in crate::format) struct Sample<'a> {
    pub(super) id: Option<Value>,
    pub(super) epoch: Option<Value>,
    /// Every event, in order (an event that is not an object is an empty one).
    pub(super) events: Vec<Event>,
    /// The `attachments` that are strings, by hash (a later non-string value removes a hash).
    pub(super) attachments: HashMap<String, Cow<'a, str>>,
    /// The `message_pool`, when it is a list.
    pub(super) pool: Vec<Value>,
    /// The hashes of the `attachment://` strings in the parts not built (the `attachments` and a
    /// `message_pool` that is not a list excepted: a `Value` tree took those out before counting).
    pub(super) refs: Vec<String>,
}

/// One event: the fields [`super`] reads of a model event (any event's, as the `event` field may
/// come after them).
#[derive(Default)]
pub(super) struct Event {
    pub event: Option<Value>,
    pub model: Option<Value>,
    pub timestamp: Option<Value>,
    pub input: Option<Value>,
    pub input_refs: Option<Value>,
    pub tools: Option<Value>,
    pub output: Option<Value>,
    /// `call.response` (the raw provider response), when `call` is an object.
    pub response: Option<Value>,
}

impl Event {
    /// The fields built, for counting their references.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        [&self.event, &self.model, &self.timestamp, &self.input, &self.input_refs, &self.tools]
            .into_iter()
            .chain([&self.output, &self.response])
            .flatten()
    }
}

/// A whole JSON eval log (the JSON form): what [`super::Inspect`] reads of it.
pub(super) struct Log<'a> {
    /// What the document is ([`super::wire::kind_of`]'s words): `an object` for a log.
    pub kind: &'static str,
    /// The `eval` header, when present.
    pub eval: Option<Value>,
    pub samples: Samples<'a>,
}

/// A log's `samples`.
pub(super) enum Samples<'a> {
    /// Absent or `null`.
    None,
    List(Vec<Sample<'a>>),
    /// Another JSON value: its kind.
    Other(&'static str),
}

/// The text samples were read from, to read a sample again as a whole `Value` tree where the
/// records do not hold what is needed: the `messages` of a sample without model events, and the
/// exact count of references with no attachment when the records found some.
pub(in crate::format) enum Source<'a> {
    /// A `.eval` sample entry's text.
    Sample(&'a str),
    /// A JSON log's text, and its samples once read as trees.
    Log(&'a str, Option<Vec<Value>>),
}

impl Source<'_> {
    /// The sample (the `index`-th of a JSON log) as a `Value` tree. The text was read as JSON once
    /// already, so it reads again.
    pub(in crate::format) fn sample(&mut self, index: usize) -> Result<Value, String> {
        let why = |e: serde_json::Error| format!("the sample cannot be read again: {e}");
        match self {
            Source::Sample(text) => serde_json::from_str(text).map_err(why),
            Source::Log(text, read) => {
                if read.is_none() {
                    let mut log: Value = serde_json::from_str(text).map_err(why)?;
                    *read = Some(match log.get_mut("samples").map(Value::take) {
                        Some(Value::Array(samples)) => samples,
                        _ => Vec::new(),
                    });
                }
                Ok(read.as_ref().and_then(|all| all.get(index)).cloned().unwrap_or_default())
            }
        }
    }
}

/// The methods every visitor here shares, which take any JSON value: `expecting` and the visits
/// of the scalars that hold no reference (`visit_bool`, the three numbers and `visit_unit`), each
/// returning `Ok` of the expression given for its kind, or of one expression for all.
macro_rules! scalars_read_as {
    ($all:expr) => {
        scalars_read_as!(boolean: $all, number: $all, null: $all);
    };
    (boolean: $boolean:expr, number: $number:expr, null: $null:expr) => {
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Ok($boolean)
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Ok($number)
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Ok($number)
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Ok($number)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok($null)
        }
    };
}

/// A record read from a JSON object: each key it reads is read by [`Record::field`]. A value that
/// is not an object reads as the default record, its references noted.
trait Record<'de>: Default {
    type Key: Deserialize<'de>;
    /// Reads the value of `key` from `map`, noting in `refs` the references of what is not built.
    fn field<A: MapAccess<'de>>(
        &mut self,
        key: Self::Key,
        map: &mut A,
        refs: &mut Vec<String>,
    ) -> Result<(), A::Error>;
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum SampleKey {
    Id,
    Epoch,
    Events,
    Attachments,
    MessagePool,
    #[serde(other)]
    Other,
}

impl<'de> Record<'de> for Sample<'de> {
    type Key = SampleKey;
    fn field<A: MapAccess<'de>>(
        &mut self,
        key: SampleKey,
        map: &mut A,
        refs: &mut Vec<String>,
    ) -> Result<(), A::Error> {
        match key {
            SampleKey::Id => self.id = Some(map.next_value()?),
            SampleKey::Epoch => self.epoch = Some(map.next_value()?),
            SampleKey::Events => self.events = map.next_value_seed(List(refs, PhantomData))?,
            SampleKey::Attachments => self.attachments = map.next_value_seed(Texts(PhantomData))?,
            SampleKey::MessagePool => self.pool = map.next_value_seed(Values)?,
            SampleKey::Other => map.next_value_seed(Refs(refs))?,
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Sample<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut refs = Vec::new();
        let mut sample: Sample<'de> = Read(&mut refs, PhantomData).deserialize(d)?;
        sample.refs = refs;
        Ok(sample)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum EventKey {
    Event,
    Model,
    Timestamp,
    Input,
    InputRefs,
    Tools,
    Output,
    Call,
    #[serde(other)]
    Other,
}

impl<'de> Record<'de> for Event {
    type Key = EventKey;
    fn field<A: MapAccess<'de>>(
        &mut self,
        key: EventKey,
        map: &mut A,
        refs: &mut Vec<String>,
    ) -> Result<(), A::Error> {
        let slot = match key {
            EventKey::Event => &mut self.event,
            EventKey::Model => &mut self.model,
            EventKey::Timestamp => &mut self.timestamp,
            EventKey::Input => &mut self.input,
            EventKey::InputRefs => &mut self.input_refs,
            EventKey::Tools => &mut self.tools,
            EventKey::Output => &mut self.output,
            EventKey::Call => {
                self.response = map.next_value_seed(Read::<Call>(refs, PhantomData))?.response;
                return Ok(());
            }
            EventKey::Other => return map.next_value_seed(Refs(refs)),
        };
        *slot = Some(map.next_value()?);
        Ok(())
    }
}

/// An event's `call`: the raw request and response sent to the provider.
#[derive(Default)]
struct Call {
    response: Option<Value>,
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum CallKey {
    Response,
    #[serde(other)]
    Other,
}

impl<'de> Record<'de> for Call {
    type Key = CallKey;
    fn field<A: MapAccess<'de>>(
        &mut self,
        key: CallKey,
        map: &mut A,
        refs: &mut Vec<String>,
    ) -> Result<(), A::Error> {
        match key {
            CallKey::Response => self.response = Some(map.next_value()?),
            CallKey::Other => map.next_value_seed(Refs(refs))?,
        }
        Ok(())
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum LogKey {
    Eval,
    Samples,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Log<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LogVisitor)
    }
}

struct LogVisitor;

impl<'de> Visitor<'de> for LogVisitor {
    type Value = Log<'de>;
    scalars_read_as!(boolean: Log::other("a boolean"), number: Log::other("a number"), null: Log::other("null"));
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Log<'de>, A::Error> {
        let mut log = Log { kind: "an object", eval: None, samples: Samples::None };
        while let Some(key) = map.next_key::<LogKey>()? {
            match key {
                LogKey::Eval => log.eval = Some(map.next_value()?),
                LogKey::Samples => log.samples = map.next_value_seed(SamplesSeed)?,
                LogKey::Other => map.next_value_seed(Refs(&mut Vec::new()))?,
            }
        }
        Ok(log)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Log<'de>, A::Error> {
        Refs(&mut Vec::new()).visit_seq(seq)?;
        Ok(Log::other("an array"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Log<'de>, E> {
        Ok(Log::other("a string"))
    }
}

impl Log<'_> {
    fn other(kind: &'static str) -> Self {
        Log { kind, eval: None, samples: Samples::None }
    }
}

/// A log's `samples`: a list of samples, `null`, or another value (named by its kind).
struct SamplesSeed;

impl<'de> DeserializeSeed<'de> for SamplesSeed {
    type Value = Samples<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Samples<'de>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SamplesSeed {
    type Value = Samples<'de>;
    scalars_read_as!(boolean: Samples::Other("a boolean"), number: Samples::Other("a number"), null: Samples::None);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Samples<'de>, A::Error> {
        let mut samples = Vec::new();
        while let Some(sample) = seq.next_element::<Sample<'de>>()? {
            samples.push(sample);
        }
        Ok(Samples::List(samples))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Samples<'de>, A::Error> {
        Refs(&mut Vec::new()).visit_map(map)?;
        Ok(Samples::Other("an object"))
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Samples<'de>, E> {
        Ok(Samples::Other("a string"))
    }
}

/// Reads a [`Record`] (`T`), noting references in the `Vec`.
struct Read<'r, T>(&'r mut Vec<String>, PhantomData<T>);

impl<'de, T: Record<'de>> DeserializeSeed<'de> for Read<'_, T> {
    type Value = T;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, T: Record<'de>> Visitor<'de> for Read<'_, T> {
    type Value = T;
    scalars_read_as!(T::default());
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<T, A::Error> {
        let mut record = T::default();
        while let Some(key) = map.next_key::<T::Key>()? {
            record.field(key, &mut map, self.0)?;
        }
        Ok(record)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<T, A::Error> {
        Refs(self.0).visit_seq(seq).map(|()| T::default())
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Refs(self.0).visit_str(v).map(|()| T::default())
    }
}

/// A list of [`Record`]s (`T`); any other value reads as an empty list, its references noted.
struct List<'r, T>(&'r mut Vec<String>, PhantomData<T>);

impl<'de, T: Record<'de>> DeserializeSeed<'de> for List<'_, T> {
    type Value = Vec<T>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<T>, D::Error> {
        d.deserialize_any(ListVisitor(self.0, PhantomData)).map(Option::unwrap_or_default)
    }
}

/// [`List`]'s visitor: `None` for a value that is not a list (its references noted).
struct ListVisitor<'r, T>(&'r mut Vec<String>, PhantomData<T>);

impl<'de, T: Record<'de>> Visitor<'de> for ListVisitor<'_, T> {
    type Value = Option<Vec<T>>;
    scalars_read_as!(None);
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<Vec<T>>, A::Error> {
        let mut list = Vec::new();
        while let Some(record) = seq.next_element_seed(Read::<T>(self.0, PhantomData))? {
            list.push(record);
        }
        Ok(Some(list))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Vec<T>>, A::Error> {
        Refs(self.0).visit_map(map).map(|()| None)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Option<Vec<T>>, E> {
        Refs(self.0).visit_str(v).map(|()| None)
    }
}

/// A list of JSON values (the `message_pool`), built whole; any other value reads as an empty list,
/// and its references are not counted (a `Value` tree took the pool out of the sample before
/// counting).
struct Values;

impl<'de> DeserializeSeed<'de> for Values {
    type Value = Vec<Value>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Vec<Value>, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Values {
    type Value = Vec<Value>;
    scalars_read_as!(Vec::new());
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Value>, A::Error> {
        let mut list = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(value) = seq.next_element::<Value>()? {
            list.push(value);
        }
        Ok(list)
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<Value>, A::Error> {
        Refs(&mut Vec::new()).visit_map(map).map(|()| Vec::new())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Vec<Value>, E> {
        Ok(Vec::new())
    }
}

/// The `attachments` that are strings, by hash; any other value reads as none (a `Value` tree took
/// the attachments out of the sample before counting references).
struct Texts<'a>(PhantomData<&'a ()>);

impl<'de> DeserializeSeed<'de> for Texts<'de> {
    type Value = HashMap<String, Cow<'de, str>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Texts<'de> {
    type Value = HashMap<String, Cow<'de, str>>;
    scalars_read_as!(HashMap::new());
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut texts = HashMap::new();
        while let Some(hash) = map.next_key::<String>()? {
            match map.next_value::<Text<'de>>()?.0 {
                Some(text) => texts.insert(hash, text),
                None => texts.remove(&hash),
            };
        }
        Ok(texts)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        Refs(&mut Vec::new()).visit_seq(seq).map(|()| HashMap::new())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(HashMap::new())
    }
}

/// A string, borrowed from the text when it holds no escape; `None` for any other value.
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Text<'de>;
    scalars_read_as!(Text(None));
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
        Ok(Text(Some(Cow::Borrowed(v))))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Text<'de>, E> {
        Ok(Text(Some(Cow::Owned(v.to_owned()))))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Text<'de>, E> {
        Ok(Text(Some(Cow::Owned(v))))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Text<'de>, A::Error> {
        Refs(&mut Vec::new()).visit_map(map).map(|()| Text(None))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Text<'de>, A::Error> {
        Refs(&mut Vec::new()).visit_seq(seq).map(|()| Text(None))
    }
}

/// Checks a value as JSON without building it, noting the hash of each `attachment://` string in
/// it (object keys aside, as a `Value` tree's walk did). Numbers are parsed and nesting is bounded
/// as for a `Value` tree, so what a tree refused these refuse.
pub(super) struct Refs<'r>(pub &'r mut Vec<String>);

impl<'de> DeserializeSeed<'de> for Refs<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Refs<'_> {
    type Value = ();
    scalars_read_as!(());
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        if let Some(hash) = v.strip_prefix("attachment://") {
            self.0.push(hash.to_owned());
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(Refs(self.0))?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while map.next_key::<de::IgnoredAny>()?.is_some() {
            map.next_value_seed(Refs(self.0))?;
        }
        Ok(())
    }
}
