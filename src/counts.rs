//! Token counts kept between runs (`--count-cache FILE`): the file's format, bytes in and bytes out.
//!
//! Tuning means replaying the same corpus again and again with other options, and every run would
//! count every text afresh. A count cache file holds, per exact counter (`o200k/tiktoken`,
//! `cl100k/tiktoken-rs`, ...), the token count of every text it has counted, keyed by the text's
//! 128-bit hash (the key the count cache has in memory): a run seeds its
//! meter with them, counts only the texts not there, and the caller
//! writes the union back. Counts are exact whichever way they were obtained, so a report is the same
//! bytes with or without the file.
//!
//! Layout, every integer little-endian:
//! - the line `ctxbudget count cache <FORMAT> <version>\n`: the format number and the version of
//!   ctxbudget that wrote it (a file from another version is not trusted: its counters may differ);
//! - a `u32` number of sections, then per section, in name order: a `u16` byte length and the
//!   counter's name, a `u64` number of entries, and the entries in key order, each a `u128` key and
//!   a `u64` count (24 bytes);
//! - the xxh3-64 of everything before it (`u64`), so a truncated or damaged file is told apart.
//!
//! Encoding sorts everything, so the same counts give the same bytes whatever the order they were
//! counted in. Nothing here reads or writes files.

use std::collections::BTreeMap;

use crate::model::Tokens;

/// Version of the layout above.
pub const FORMAT: u32 = 1;

/// One entry: a text's 128-bit hash and its token count.
pub type Entry = (u128, Tokens);

/// Why a count cache file's bytes cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CountsError {
    /// Not a count cache file at all.
    #[error("not a ctxbudget count cache (it does not start with `ctxbudget count cache`)")]
    NotCounts,
    /// Written by another format or another version of ctxbudget.
    #[error("written by {found}, this is {expected}")]
    OtherVersion {
        /// What the file says.
        found: String,
        /// What this build writes.
        expected: String,
    },
    /// Cut short or damaged.
    #[error("damaged ({0})")]
    Damaged(&'static str),
}

/// The sections of a count cache file: entries per counter name, each list in key order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredCounts {
    sections: BTreeMap<String, Vec<Entry>>,
}

/// The header line this build writes.
fn header() -> String {
    format!("ctxbudget count cache {FORMAT} {}\n", env!("CARGO_PKG_VERSION"))
}

const MAGIC: &[u8] = b"ctxbudget count cache ";

impl StoredCounts {
    /// Reads a count cache file's bytes.
    pub fn decode(bytes: &[u8]) -> Result<StoredCounts, CountsError> {
        if !bytes.starts_with(MAGIC) {
            return Err(CountsError::NotCounts);
        }
        let line_end =
            bytes.iter().position(|&b| b == b'\n').ok_or(CountsError::Damaged("no header line"))?;
        let expected = header();
        if bytes[..=line_end] != *expected.as_bytes() {
            let found = String::from_utf8_lossy(&bytes[MAGIC.len()..line_end]).into_owned();
            return Err(CountsError::OtherVersion {
                found: format!("format and version {found}"),
                expected: format!("{FORMAT} {}", env!("CARGO_PKG_VERSION")),
            });
        }
        let Some(body_end) = bytes.len().checked_sub(8).filter(|&e| e > line_end) else {
            return Err(CountsError::Damaged("too short"));
        };
        let sum = u64::from_le_bytes(bytes[body_end..].try_into().expect("eight bytes"));
        if xxhash_rust::xxh3::xxh3_64(&bytes[..body_end]) != sum {
            return Err(CountsError::Damaged("checksum mismatch"));
        }
        let mut r = Reader { bytes: &bytes[line_end + 1..body_end] };
        let mut sections = BTreeMap::new();
        for _ in 0..r.u32()? {
            let name_len = usize::from(r.u16()?);
            let name = std::str::from_utf8(r.take(name_len)?)
                .map_err(|_| CountsError::Damaged("a counter name is not UTF-8"))?
                .to_owned();
            let n = usize::try_from(r.u64()?).map_err(|_| CountsError::Damaged("too many entries"))?;
            if n > r.bytes.len() / 24 {
                return Err(CountsError::Damaged("fewer entries than announced"));
            }
            let mut entries = Vec::with_capacity(n);
            for _ in 0..n {
                entries.push((r.u128()?, r.u64()?));
            }
            if !entries.windows(2).all(|w| w[0].0 < w[1].0) {
                return Err(CountsError::Damaged("entries out of order"));
            }
            sections.insert(name, entries);
        }
        if !r.bytes.is_empty() {
            return Err(CountsError::Damaged("bytes after the last section"));
        }
        Ok(StoredCounts { sections })
    }

    /// The file's bytes: sections in name order, entries in key order.
    pub fn encode(&self) -> Vec<u8> {
        let entries: usize = self.sections.values().map(Vec::len).sum();
        let mut out = Vec::with_capacity(64 + 64 * self.sections.len() + 24 * entries);
        out.extend_from_slice(header().as_bytes());
        out.extend_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for (name, entries) in &self.sections {
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
            for (key, tokens) in entries {
                out.extend_from_slice(&key.to_le_bytes());
                out.extend_from_slice(&tokens.to_le_bytes());
            }
        }
        let sum = xxhash_rust::xxh3::xxh3_64(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// The entries kept for the counter `name` (in key order; empty when there are none).
    pub fn section(&self, name: &str) -> &[Entry] {
        self.sections.get(name).map_or(&[], Vec::as_slice)
    }

    /// Adds `entries` (any order) to the counter `name`'s. A key already there keeps its count:
    /// both are the exact count of the same text.
    pub fn merge(&mut self, name: &str, entries: Vec<Entry>) {
        if entries.is_empty() {
            return;
        }
        let section = self.sections.entry(name.to_owned()).or_default();
        section.extend(entries);
        // A stable sort keeps, of two entries with one key, the one kept before; the section's
        // own run of sorted entries makes it a merge.
        section.sort_by_key(|e| e.0);
        section.dedup_by_key(|e| e.0);
    }

    /// Number of entries over all counters.
    pub fn len(&self) -> usize {
        self.sections.values().map(Vec::len).sum()
    }

    /// Whether no count is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Reads little-endian integers off the front of a slice.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CountsError> {
        if self.bytes.len() < n {
            return Err(CountsError::Damaged("cut short"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }
    fn u16(&mut self) -> Result<u16, CountsError> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().expect("two bytes")))
    }
    fn u32(&mut self) -> Result<u32, CountsError> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("four bytes")))
    }
    fn u64(&mut self) -> Result<u64, CountsError> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("eight bytes")))
    }
    fn u128(&mut self) -> Result<u128, CountsError> {
        Ok(u128::from_le_bytes(self.take(16)?.try_into().expect("sixteen bytes")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredCounts {
        let mut s = StoredCounts::default();
        s.merge("o200k/tiktoken", vec![(3 << 100, 7), (1, 2), (u128::MAX, 0)]);
        s.merge("cl100k/tiktoken-rs", vec![(5, 9)]);
        s
    }

    #[test]
    fn bytes_read_back_as_written() {
        let s = sample();
        let bytes = s.encode();
        assert_eq!(StoredCounts::decode(&bytes), Ok(s.clone()));
        assert_eq!(s.section("o200k/tiktoken"), &[(1, 2), (3 << 100, 7), (u128::MAX, 0)]);
        assert_eq!(s.section("cl100k/tiktoken"), &[] as &[Entry]);
        assert_eq!(s.len(), 4);
        // Header, section count, two sections (name, length, entries), checksum.
        let header = header().len();
        assert_eq!(bytes.len(), header + 4 + (2 + 18 + 8 + 24) + (2 + 14 + 8 + 3 * 24) + 8);
    }

    #[test]
    fn the_same_counts_in_any_order_give_the_same_bytes() {
        let mut a = StoredCounts::default();
        a.merge("o200k/tiktoken", vec![(9, 1), (2, 3)]);
        a.merge("o200k/tiktoken", vec![(5, 4), (2, 3)]);
        let mut b = StoredCounts::default();
        b.merge("o200k/tiktoken", vec![(5, 4)]);
        b.merge("o200k/tiktoken", vec![(2, 3), (9, 1), (9, 1)]);
        assert_eq!(a.encode(), b.encode());
        assert_eq!(a.section("o200k/tiktoken"), &[(2, 3), (5, 4), (9, 1)]);
    }

    #[test]
    fn a_key_already_kept_keeps_its_count() {
        let mut s = StoredCounts::default();
        s.merge("o200k/tiktoken", vec![(1, 10)]);
        s.merge("o200k/tiktoken", vec![(1, 11), (0, 5)]);
        assert_eq!(s.section("o200k/tiktoken"), &[(0, 5), (1, 10)]);
    }

    #[test]
    fn damaged_files_are_told_apart() {
        let bytes = sample().encode();
        assert_eq!(StoredCounts::decode(b"{\"not\": 1}"), Err(CountsError::NotCounts));
        assert_eq!(StoredCounts::decode(b""), Err(CountsError::NotCounts));
        // Every strict prefix that keeps the magic is refused, never read as fewer counts.
        for cut in MAGIC.len()..bytes.len() {
            assert!(StoredCounts::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        // A flipped bit anywhere after the header is caught by the checksum.
        for at in [header().len(), header().len() + 30, bytes.len() - 30, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[at] ^= 0x10;
            assert_eq!(StoredCounts::decode(&bad), Err(CountsError::Damaged("checksum mismatch")), "at {at}");
        }
    }

    #[test]
    fn another_version_is_not_trusted() {
        let bytes = sample().encode();
        let mut forged = format!("ctxbudget count cache {FORMAT} 0.0.0-other\n").into_bytes();
        forged.extend_from_slice(&bytes[header().len()..]);
        let e = StoredCounts::decode(&forged).unwrap_err();
        assert!(matches!(e, CountsError::OtherVersion { .. }), "{e:?}");
        assert!(e.to_string().contains("0.0.0-other"), "{e}");
    }

    #[test]
    fn an_empty_cache_round_trips() {
        let s = StoredCounts::default();
        assert!(s.is_empty());
        assert_eq!(StoredCounts::decode(&s.encode()), Ok(s));
    }
}
