//! The length of Python's `repr` of a tool call as LangChain holds it, which
//! `count_tokens_approximately` adds to an AI message's chars (`len(repr(message.tool_calls))`).
//!
//! A call's arguments reach LangChain as JSON text (`parse_tool_call` in
//! `langchain_core/output_parsers/openai_tools.py`: `json.loads(arguments, strict=False)`, then
//! `args = parsed or {}`), so their part of the repr is the repr of what `json.loads` gives: dicts
//! `{'k': v, ...}` (a key given twice once, with its last value), lists `[a, b]`, `True`, `False`,
//! `None`, ints as written (`-0` is `0`), floats as Python prints them (`1.0`, `1e+20`, `1e-05`,
//! `inf`), strings quoted and escaped as `str.__repr__` does; a falsy value (`null`, `false`, `0`,
//! `""`, `[]`) is `{}`. Arguments that are not a JSON object are free text, the input of a custom
//! tool (a Codex `apply_patch`, the commands mini-swe-agent and SWE-agent parse from the model's
//! text), which `langchain_openai` holds as `{'__arg1': text}` (its Responses API
//! `custom_tool_call`); as a function call's arguments LangChain would reject them.
//!
//! Only lengths are computed, in code points as Python's `len` counts them, without building the
//! text; runs of ASCII without a quote or an escape are taken a slice at a time.

use std::borrow::Cow;
use std::collections::HashMap;

/// Chars of `{'name': '', 'args': , 'id': '', 'type': 'tool_call'}` besides the name, the id
/// (each inside its quotes) and the arguments.
const CALL: u64 = 49;

/// Chars of `repr(tool_call)` for a call of `name`, `id` and arguments whose repr is `args`
/// chars long.
pub fn call_chars(name: &str, id: &str, args: u64) -> u64 {
    CALL + text_chars(name) + text_chars(id) + args
}

/// Chars of `repr(list)` for a list of items whose reprs have these lengths (0 for none).
pub fn list_chars(items: impl Iterator<Item = u64>) -> u64 {
    let (mut n, mut sum) = (0u64, 0u64);
    for i in items {
        (n, sum) = (n + 1, sum + i);
    }
    2 + sum + 2 * n.saturating_sub(1)
}

/// Chars of `repr(args)` for the arguments `arguments` as sent (see the module doc).
pub fn args_chars(arguments: &str) -> u64 {
    match json_chars(arguments) {
        Some(v) if v.falsy => 2,
        Some(Value { dict: true, chars, .. }) => chars,
        // `{'__arg1': …}`
        _ => 12 + text_chars(arguments),
    }
}

/// The repr of what `json.loads(text)` gives, or `None` where it raises.
fn json_chars(text: &str) -> Option<Value> {
    let mut p = Parser { s: text, i: 0 };
    p.space();
    let value = p.value(0)?;
    p.space();
    (p.i == p.s.len()).then_some(value)
}

/// Whether Python's `str.isprintable` is false for code point `c`, unassigned code points aside:
/// the other categories it escapes (Cc, Cf, Cs, Co, Zl, Zp, and Zs but the space), as Python 3.11
/// (Unicode 14.0) has them.
fn escaped(c: u32) -> bool {
    const RANGES: [(u32, u32); 28] = [
        (0x0, 0x1f),
        (0x7f, 0xa0),
        (0xad, 0xad),
        (0x600, 0x605),
        (0x61c, 0x61c),
        (0x6dd, 0x6dd),
        (0x70f, 0x70f),
        (0x890, 0x891),
        (0x8e2, 0x8e2),
        (0x1680, 0x1680),
        (0x180e, 0x180e),
        (0x2000, 0x200f),
        (0x2028, 0x202f),
        (0x205f, 0x2064),
        (0x2066, 0x206f),
        (0x3000, 0x3000),
        (0xd800, 0xf8ff),
        (0xfeff, 0xfeff),
        (0xfff9, 0xfffb),
        (0x110bd, 0x110bd),
        (0x110cd, 0x110cd),
        (0x13430, 0x13438),
        (0x1bca0, 0x1bca3),
        (0x1d173, 0x1d17a),
        (0xe0001, 0xe0001),
        (0xe0020, 0xe007f),
        (0xf0000, 0xffffd),
        (0x100000, 0x10fffd),
    ];
    let at = RANGES.partition_point(|r| r.1 < c);
    RANGES.get(at).is_some_and(|r| r.0 <= c)
}

/// Chars of `repr(s)` for the string of code points `s` (lone surrogates allowed): quoted with
/// `'` unless it holds `'` and no `"`; `\\`, the quote, `\t`, `\n`, `\r` escaped by two chars,
/// other non-printable code points by `\xNN`, `\uNNNN` or `\UNNNNNNNN`. (The tests' reference
/// for [`text_chars`] and the parser, which take ASCII a run at a time.)
#[cfg(test)]
pub fn str_chars(s: impl Iterator<Item = u32>) -> u64 {
    let mut r = Repr::default();
    for c in s {
        r.push(c);
    }
    r.chars()
}

/// [`str_chars`] of a text, taking its runs of ASCII without a quote a slice at a time.
pub fn text_chars(text: &str) -> u64 {
    let mut repr = Repr::default();
    let mut rest = text;
    loop {
        let n = repr.push_run(rest.as_bytes());
        let Some(c) = rest[n..].chars().next() else { return repr.chars() };
        repr.push(u32::from(c));
        rest = &rest[n + c.len_utf8()..];
    }
}

/// Chars of a string's `repr` as its code points arrive.
#[derive(Default)]
struct Repr {
    /// Chars of the code points but the quotes, `'` and `"` counted once.
    inner: u64,
    /// `'` seen.
    single: u64,
    /// `"` seen.
    double: bool,
}

impl Repr {
    /// Chars for the ASCII bytes 0x00..0x80: printable 1, `\\` `\t` `\n` `\r` 2, others `\xNN`.
    const ASCII: [u8; 128] = {
        let mut t = [1u8; 128];
        let mut b = 0;
        while b < 0x20 {
            t[b] = 4;
            b += 1;
        }
        t[0x7f] = 4;
        t[b'\\' as usize] = 2;
        t[b'\t' as usize] = 2;
        t[b'\n' as usize] = 2;
        t[b'\r' as usize] = 2;
        t
    };

    fn push(&mut self, c: u32) {
        self.inner += match c {
            0x27 => {
                self.single += 1;
                1
            }
            0x22 => {
                self.double = true;
                1
            }
            0..0x80 => u64::from(Self::ASCII[c as usize]),
            c if !escaped(c) => 1,
            0x80..=0xff => 4,
            0x100..=0xffff => 6,
            _ => 10,
        };
    }

    /// [`Self::ASCII`] for the bytes a run takes, 0 for those that end it: a quote, a backslash
    /// (in JSON, an escape), and the bytes of non-ASCII chars.
    const RUN: [u8; 256] = {
        let mut t = [0u8; 256];
        let mut b = 0;
        while b < 0x80 {
            t[b] = Self::ASCII[b];
            b += 1;
        }
        t[b'"' as usize] = 0;
        t[b'\'' as usize] = 0;
        t[b'\\' as usize] = 0;
        t
    };

    /// Takes the ASCII bytes at the start of `bytes` up to the first that ends a run
    /// ([`Self::RUN`]); gives how many it took.
    fn push_run(&mut self, bytes: &[u8]) -> usize {
        let mut n = 0;
        while let Some(&b) = bytes.get(n) {
            let chars = Self::RUN[usize::from(b)];
            if chars == 0 {
                break;
            }
            self.inner += u64::from(chars);
            n += 1;
        }
        n
    }

    fn chars(&self) -> u64 {
        // Quoted with `'`, each `'` inside is escaped; with `"` (no `"` inside) nothing is.
        let escapes = if self.single > 0 && !self.double { 0 } else { self.single };
        2 + self.inner + escapes
    }
}

/// A parsed JSON value: its repr's chars, whether it is a dict, whether Python finds it falsy.
struct Value {
    chars: u64,
    dict: bool,
    falsy: bool,
}

impl Value {
    fn of(chars: u64, falsy: bool) -> Option<Value> {
        Some(Value { chars, dict: false, falsy })
    }
}

/// A dict key, to find a key given twice: its text (borrowed from the JSON text when it has no
/// escape), or its code points when it holds a lone surrogate (no text equals those).
#[derive(PartialEq, Eq, Hash)]
enum Key<'s> {
    Text(Cow<'s, str>),
    Points(Vec<u32>),
}

/// A dict's entries' reprs (`'key': value`), each key once with its last value, as
/// `dict(pairs)` keeps them: a list while there are few, a map past that.
#[derive(Default)]
struct Entries<'s> {
    list: Vec<(Key<'s>, u64)>,
    map: HashMap<Key<'s>, u64>,
}

impl<'s> Entries<'s> {
    /// Keys a list holds before they move to a map.
    const LIST: usize = 16;

    fn insert(&mut self, key: Key<'s>, chars: u64) {
        if !self.map.is_empty() {
            self.map.insert(key, chars);
        } else if let Some(e) = self.list.iter_mut().find(|e| e.0 == key) {
            e.1 = chars;
        } else if self.list.len() < Self::LIST {
            self.list.push((key, chars));
        } else {
            self.map.extend(self.list.drain(..));
            self.map.insert(key, chars);
        }
    }
}

/// Deeper than this, Python's `json.loads` raises `RecursionError` (its default limit is 1,000
/// frames); this parser gives up there too, before its recursion could exhaust the stack.
const MAX_DEPTH: usize = 990;

/// Python's `json` scanner over a JSON text, `strict=False` (control characters allowed inside
/// strings), computing repr lengths as it goes; `i` is a byte offset at a char boundary.
struct Parser<'s> {
    s: &'s str,
    i: usize,
}

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.i).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        let found = self.s[self.i..].starts_with(word);
        if found {
            self.i += word.len();
        }
        found
    }

    fn value(&mut self, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => self.object(depth),
            b'[' => self.array(depth),
            b'"' => {
                let (repr, raw) = self.string(None)?;
                Value::of(repr.chars(), raw.is_empty())
            }
            _ if self.eat("null") => Value::of(4, true),
            _ if self.eat("true") => Value::of(4, false),
            _ if self.eat("false") => Value::of(5, true),
            _ if self.eat("NaN") => Value::of(3, false),
            _ if self.eat("Infinity") => Value::of(3, false),
            _ if self.eat("-Infinity") => Value::of(4, false),
            _ => self.number(),
        }
    }

    fn object(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let mut entries = Entries::default();
        self.space();
        if !self.eat("}") {
            loop {
                self.space();
                if self.peek()? != b'"' {
                    return None;
                }
                let at = self.i;
                let (repr, raw) = self.string(None)?;
                let key = self.key(at, raw)?;
                self.space();
                if !self.eat(":") {
                    return None;
                }
                self.space();
                let value = self.value(depth + 1)?;
                // `'key': value`
                entries.insert(key, repr.chars() + 2 + value.chars);
                self.space();
                if self.eat("}") {
                    break;
                }
                if !self.eat(",") {
                    return None;
                }
            }
        }
        let falsy = entries.list.is_empty() && entries.map.is_empty();
        let chars = list_chars(entries.list.into_iter().map(|e| e.1).chain(entries.map.into_values()));
        Some(Value { chars, dict: true, falsy })
    }

    /// The key of the string at `at` (its opening quote), whose JSON text between the quotes is
    /// `raw`: that text itself unless it has an escape.
    fn key(&self, at: usize, raw: &'s str) -> Option<Key<'s>> {
        if !raw.contains('\\') {
            return Some(Key::Text(Cow::Borrowed(raw)));
        }
        let mut points = Vec::new();
        Parser { s: self.s, i: at }.string(Some(&mut points))?;
        Some(match points.iter().map(|&c| char::from_u32(c)).collect::<Option<String>>() {
            Some(text) => Key::Text(Cow::Owned(text)),
            None => Key::Points(points),
        })
    }

    fn array(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let (mut n, mut chars) = (0u64, 0u64);
        self.space();
        if !self.eat("]") {
            loop {
                self.space();
                (n, chars) = (n + 1, chars + self.value(depth + 1)?.chars);
                self.space();
                if self.eat("]") {
                    break;
                }
                if !self.eat(",") {
                    return None;
                }
            }
        }
        Value::of(2 + chars + 2 * n.saturating_sub(1), n == 0)
    }

    /// The string at its opening quote: its repr's chars and its JSON text between the quotes.
    /// Its code points (`\uXXXX` surrogate pairs joined, lone ones kept) go to `points` if
    /// given. Runs of ASCII without a quote or an escape are taken a slice at a time.
    fn string(&mut self, mut points: Option<&mut Vec<u32>>) -> Option<(Repr, &'s str)> {
        self.i += 1;
        let (start, bytes) = (self.i, self.s.as_bytes());
        let mut repr = Repr::default();
        loop {
            let rest = &bytes[self.i..];
            let n = repr.push_run(rest);
            if let Some(p) = points.as_deref_mut() {
                p.extend(rest[..n].iter().map(|&b| u32::from(b)));
            }
            self.i += n + 1;
            let c = match *rest.get(n)? {
                b'"' => return Some((repr, &self.s[start..self.i - 1])),
                b'\\' => {
                    let e = self.peek()?;
                    self.i += 1;
                    match e {
                        b'"' | b'\\' | b'/' => u32::from(e),
                        b'b' => 8,
                        b'f' => 12,
                        b'n' => 10,
                        b'r' => 13,
                        b't' => 9,
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    }
                }
                b'\'' => 0x27,
                _ => {
                    self.i -= 1;
                    let c = self.s[self.i..].chars().next()?;
                    self.i += c.len_utf8();
                    u32::from(c)
                }
            };
            repr.push(c);
            if let Some(p) = points.as_deref_mut() {
                p.push(c);
            }
        }
    }

    /// The code point of a `\u` escape (after the `\u`), joining a high surrogate with a `\u`
    /// low surrogate right after it.
    fn unicode_escape(&mut self) -> Option<u32> {
        let hex4 = |p: &mut Self| -> Option<u32> {
            let h = p.s.get(p.i..p.i + 4)?;
            let v = u32::from_str_radix(h, 16).ok().filter(|_| h.bytes().all(|b| b.is_ascii_hexdigit()))?;
            p.i += 4;
            Some(v)
        };
        let high = hex4(self)?;
        if (0xd800..0xdc00).contains(&high) && self.s[self.i..].starts_with("\\u") {
            let at = self.i;
            self.i += 2;
            match hex4(self) {
                Some(low) if (0xdc00..0xe000).contains(&low) => {
                    return Some(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00));
                }
                _ => self.i = at,
            }
        }
        Some(high)
    }

    /// A number as Python's scanner matches it (`-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`).
    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        let digits = |p: &mut Self| {
            let from = p.i;
            while p.peek().is_some_and(|b| b.is_ascii_digit()) {
                p.i += 1;
            }
            p.i - from
        };
        self.eat("-");
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => {
                digits(self);
            }
            _ => return None,
        }
        let int_end = self.i;
        if self.peek() == Some(b'.') && self.s.as_bytes().get(self.i + 1).is_some_and(u8::is_ascii_digit) {
            self.i += 1;
            digits(self);
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let at = self.i;
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                self.i = at;
            }
        }
        let text = &self.s[start..self.i];
        if self.i == int_end {
            // An int: as written, but `-0` is `0`.
            let zero = text.trim_start_matches('-') == "0";
            return Value::of(text.len() as u64 - u64::from(zero && text.starts_with('-')), zero);
        }
        let x: f64 = text.parse().ok()?;
        Value::of(float_chars(x), x == 0.0)
    }
}

/// Chars of Python's `repr(x)` for a float: the shortest digits that read back as `x`, in
/// positional notation when the decimal point falls within 16 places (`1e16` is `1e+16`,
/// `1e15` is `1000000000000000.0`, `0.0001` stays, `0.00001` is `1e-05`), else in exponent
/// notation with a sign and at least two digits.
pub fn float_chars(x: f64) -> u64 {
    let sign = u64::from(x.is_sign_negative());
    if x.is_nan() {
        return 3;
    }
    if x.is_infinite() {
        return sign + 3;
    }
    // Rust's `{:e}` gives the shortest round-trip digits, `d.ddde-N`.
    let e = format!("{:e}", x.abs());
    let (mantissa, exponent) = e.split_once('e').unwrap_or((&e, "0"));
    let digits = mantissa.bytes().filter(u8::is_ascii_digit).count() as i64;
    let decpt = exponent.parse::<i64>().unwrap_or(0) + 1;
    let chars = if decpt <= -4 || decpt > 16 {
        let mantissa = if digits > 1 { digits + 1 } else { 1 };
        let exp = (decpt - 1).unsigned_abs();
        mantissa + 2 + (exp.to_string().len() as i64).max(2)
    } else if decpt <= 0 {
        2 - decpt + digits
    } else if decpt < digits {
        digits + 1
    } else {
        decpt + 2
    };
    sign + chars as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chars of `expected`, Python's `repr` of what `json.loads(arguments)` gives, as written by
    /// hand from Python's rules (and checked against CPython 3.11).
    fn chars(expected: &str) -> u64 {
        expected.chars().count() as u64
    }

    #[test]
    fn dicts_and_lists_use_quotes_and_python_separators() {
        assert_eq!(args_chars(r#"{"path":"a.rs"}"#), chars("{'path': 'a.rs'}"));
        assert_eq!(args_chars(r#"{"path": "a.rs"}"#), chars("{'path': 'a.rs'}"));
        assert_eq!(args_chars(" { \"a\" : [ 1 , 2 ] }\n"), chars("{'a': [1, 2]}"));
        assert_eq!(
            args_chars(r#"{"a":{"b":[1,2,{"c":null}]},"d":true,"e":false}"#),
            chars("{'a': {'b': [1, 2, {'c': None}]}, 'd': True, 'e': False}")
        );
        assert_eq!(args_chars(r#"{"a":[],"b":{}}"#), chars("{'a': [], 'b': {}}"));
        // A key given twice is one key, with its last value, among few keys or many.
        assert_eq!(args_chars(r#"{"a":1,"a":22}"#), chars("{'a': 22}"));
        let many: Vec<String> = (0..40).map(|k| format!("\"k{k}\":{k}")).collect();
        let text = format!("{{{},\"k3\":333,\"k39\":\"x\"}}", many.join(","));
        let want: Vec<String> = (0..40)
            .map(|k| match k {
                3 => "'k3': 333".to_owned(),
                39 => "'k39': 'x'".to_owned(),
                k => format!("'k{k}': {k}"),
            })
            .collect();
        assert_eq!(args_chars(&text), chars(&format!("{{{}}}", want.join(", "))));
    }

    #[test]
    fn strings_are_quoted_and_escaped_as_python_does() {
        // `'` inside and no `"`: double quotes, nothing escaped.
        assert_eq!(args_chars(r#"{"q":"it's"}"#), chars(r#"{'q': "it's"}"#));
        // Both: single quotes, `'` escaped.
        assert_eq!(args_chars(r#"{"q":"say \"hi\" it's"}"#), chars(r#"{'q': 'say "hi" it\'s'}"#));
        assert_eq!(args_chars(r#"{"q":"say \"hi\""}"#), chars(r#"{'q': 'say "hi"'}"#));
        // Backslash, newline, tab, carriage return by two chars; `\/` is `/`.
        assert_eq!(args_chars(r#"{"p":"C:\\dir\nx\ty\r\/"}"#), chars(r"{'p': 'C:\\dir\nx\ty\r/'}"));
        // A raw tab inside a string (`strict=False` takes it) is escaped all the same.
        assert_eq!(args_chars("{\"raw\":\"tab\tinside\"}"), chars(r"{'raw': 'tab\tinside'}"));
        // Printable non-ASCII stays as it is, one char each (the emoji is one code point).
        assert_eq!(args_chars(r#"{"u":"é€😀"}"#), chars("{'u': 'é€😀'}"));
        // Non-printable: \xNN below 0x100, \uNNNN below 0x10000, \UNNNNNNNN above; a surrogate
        // pair is one code point, a lone surrogate is escaped.
        assert_eq!(
            args_chars(r#"{"z":"\u200b\u0000\u00a0\ud83d\ude00\ud800\u001b\u007f\u0085\udb40\udc01"}"#),
            chars(r"{'z': '\u200b\x00\xa0😀\ud800\x1b\x7f\x85\U000e0001'}")
        );
    }

    #[test]
    fn numbers_print_as_python_prints_them() {
        assert_eq!(
            args_chars(
                r#"{"n":[1,-0,1.0,1e20,1E5,0.00001,1.5e300,-0.0,123.456e-2,1e400,12345678901234567890]}"#
            ),
            chars(
                "{'n': [1, 0, 1.0, 1e+20, 100000.0, 1e-05, 1.5e+300, -0.0, 1.23456, inf, 12345678901234567890]}"
            )
        );
        assert_eq!(float_chars(1e16), 5, "1e+16");
        assert_eq!(float_chars(1e15), 18, "1000000000000000.0");
        assert_eq!(float_chars(1234567890123456.7), 18, "1234567890123456.8");
        assert_eq!(float_chars(12345678901234567.0), 22, "1.2345678901234568e+16");
        assert_eq!(float_chars(0.0001), 6, "0.0001");
        assert_eq!(float_chars(2.5e-7), 7, "2.5e-07");
        assert_eq!(float_chars(5e-324), 6, "5e-324");
        assert_eq!(float_chars(1.7976931348623157e308), 23, "1.7976931348623157e+308");
        assert_eq!(float_chars(100.0), 5, "100.0");
        assert_eq!(float_chars(0.1), 3, "0.1");
    }

    #[test]
    fn falsy_arguments_are_an_empty_dict_and_free_text_one_string_argument() {
        // `args = parsed or {}`.
        for falsy in ["null", "false", "0", "0.0", "\"\"", "[]", "{}", " {} "] {
            assert_eq!(args_chars(falsy), 2, "{falsy}");
        }
        // Not a JSON object: `{'__arg1': text}`, the text as sent.
        assert_eq!(args_chars("ls -la"), chars("{'__arg1': 'ls -la'}"));
        assert_eq!(args_chars(""), chars("{'__arg1': ''}"));
        assert_eq!(args_chars("[1]"), chars("{'__arg1': '[1]'}"));
        assert_eq!(args_chars("\"x\""), chars(r#"{'__arg1': '"x"'}"#));
        assert_eq!(args_chars("*** Begin Patch\n"), chars(r"{'__arg1': '*** Begin Patch\n'}"));
        assert_eq!(args_chars("{'a': 1}"), chars(r#"{'__arg1': "{'a': 1}"}"#));
        // Where `json.loads` raises: extra data, a trailing comma, a leading zero, a bare point, an
        // unknown escape, an open string.
        for text in
            ["{\"a\":1} x", "{\"a\":1,}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":\"\\q\"}", "{\"a\":\"open"]
        {
            assert_eq!(args_chars(text), 12 + str_chars(text.chars().map(u32::from)), "{text}");
            assert!(json_chars(text).is_none(), "{text}");
        }
        // Nesting past Python's recursion limit is an error there too.
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(2_000), "]".repeat(2_000));
        assert!(json_chars(&deep).is_none());
    }

    #[test]
    fn a_key_given_twice_is_found_however_it_is_escaped() {
        assert_eq!(args_chars(r#"{"a":1,"\u0061":22}"#), chars("{'a': 22}"));
        assert_eq!(args_chars(r#"{"\u00e9":1,"é":22,"\n":3}"#), chars(r"{'é': 22, '\n': 3}"));
        // A lone surrogate is a key of its own, given twice once.
        assert_eq!(args_chars(r#"{"\ud800":1,"\ud800":22}"#), chars(r"{'\ud800': 22}"));
    }

    #[test]
    fn text_chars_is_str_chars_of_the_text() {
        let texts = [
            "",
            "plain ascii",
            "it's",
            "say \"hi\" it's",
            "tab\there\nnew\r\\ \x00\x1b\x7f",
            "é€😀 mixed 'quotes' \u{200b}\u{85}\u{e0001}",
            "\"only double\"",
        ];
        for t in texts {
            assert_eq!(text_chars(t), str_chars(t.chars().map(u32::from)), "{t:?}");
            // The same text as a JSON string value gives the same repr.
            let json = serde_json::to_string(&serde_json::json!({ "k": t })).unwrap();
            assert_eq!(args_chars(&json), 7 + str_chars(t.chars().map(u32::from)), "{t:?}");
        }
    }

    #[test]
    fn a_call_and_a_list_of_calls() {
        // [{'name': 'Read', 'args': {}, 'id': 'c0', 'type': 'tool_call'}]
        assert_eq!(list_chars([call_chars("Read", "c0", 2)].into_iter()), 63);
        // [{'name': 'Bash', 'args': {'command': 'ls'}, 'id': 'toolu_01', 'type': 'tool_call'},
        //  {'name': "it's", 'args': {}, 'id': 'x', 'type': 'tool_call'}]
        let bash = call_chars("Bash", "toolu_01", args_chars(r#"{"command":"ls"}"#));
        assert_eq!(list_chars([bash, call_chars("it's", "x", 2)].into_iter()), 146);
    }
}
