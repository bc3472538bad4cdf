//! RFC 3339 timestamps as milliseconds since the Unix epoch, read and written with `jiff`.
//!
//! Traces record times as ISO-8601 strings (`2025-09-03T00:47:19.293Z`, sometimes with an offset,
//! no zone, or more fractional digits). Only differences between timestamps matter to ctxbudget
//! (idle gaps, cache TTLs), so `Millis` stays the crate's type and jiff does the calendar. Pure
//! functions, no I/O.

use crate::model::Millis;

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` with jiff's RFC 3339/Temporal parser; a space
/// may replace `T`, and a time without a zone is read as UTC (the convention of the logs that omit
/// it). The result is floored to the millisecond. Returns `None` for anything jiff rejects, for a
/// date without a time, and for a bracketed time-zone annotation (`[Europe/Paris]`), which this
/// build of jiff carries no database to resolve.
///
/// Where jiff's grammar is wider or narrower than RFC 3339, jiff decides (no trace seen holds these
/// forms): it also accepts `HH:MM` without seconds, compact offsets (`+0900`, `+09`) and the basic
/// format (`20250903T004719Z`); it refuses a day past the month's end (`02-31`) and more than nine
/// fractional digits, and reads a leap second `:60` as `:59`.
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    use jiff::fmt::temporal::Pieces;
    let pieces = Pieces::parse(s).ok()?;
    if pieces.time_zone_annotation().is_some() {
        return None;
    }
    let local = pieces.date().to_datetime(pieces.time()?);
    let offset = pieces.to_numeric_offset().unwrap_or(jiff::tz::Offset::UTC);
    let at = offset.to_timestamp(local).ok()?;
    i64::try_from(at.as_nanosecond().div_euclid(1_000_000)).ok()
}

/// Milliseconds in 400 Gregorian years, the period after which the calendar repeats.
const CYCLE_MS: i64 = 146_097 * 86_400_000;

/// Formats as `YYYY-MM-DDTHH:MM:SS.mmmZ`, for any `Millis`: a hostile log may record a time
/// outside jiff's years -9999..=9999, so the count is moved by whole 400-year cycles into 1970..2370,
/// where jiff names the date, and the year is moved back.
pub fn format_rfc3339(ms: Millis) -> String {
    let cycles = ms.div_euclid(CYCLE_MS);
    let within =
        jiff::Timestamp::from_millisecond(ms.rem_euclid(CYCLE_MS)).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let t = jiff::tz::Offset::UTC.to_datetime(within);
    let year = i64::from(t.year()) + cycles * 400;
    let (month, day, hour, minute) = (t.month(), t.day(), t.hour(), t.minute());
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{:02}.{:03}Z", t.second(), t.millisecond())
}

/// Serde adapter for `Option<Millis>` stored as an RFC 3339 string.
pub mod opt_rfc3339 {
    use super::*;
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    /// Writes the timestamp as RFC 3339.
    pub fn serialize<S: Serializer>(v: &Option<Millis>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(ms) => s.serialize_str(&format_rfc3339(*ms)),
            None => s.serialize_none(),
        }
    }

    /// Reads an RFC 3339 string, or null.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Millis>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(s) => parse_rfc3339(&s)
                .map(Some)
                .ok_or_else(|| D::Error::custom(format!("`{s}` is not an RFC 3339 timestamp"))),
        }
    }
}

#[cfg(test)]
mod differential {
    //! The hand-written parser and formatter this module had before jiff, checked against the
    //! jiff versions on every timestamp the corpus, the fixtures and the bundled traces hold.
    use crate::model::Millis;

    /// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`; a space may replace `T`. Returns `None` for
    /// anything else.
    fn parse_rfc3339_old(s: &str) -> Option<Millis> {
        let b = s.as_bytes();
        if b.len() < 19 {
            return None;
        }
        let num = |from: usize, len: usize| -> Option<i64> {
            let part = b.get(from..from + len)?;
            if !part.iter().all(u8::is_ascii_digit) {
                return None;
            }
            Some(part.iter().fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
        };
        if b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b't' || b[10] == b' ') {
            return None;
        }
        if b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
        let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
        if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        let mut i = 19;
        let mut millis = 0i64;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                if i - start < 3 {
                    millis = millis * 10 + i64::from(b[i] - b'0');
                }
                i += 1;
            }
            if i == start {
                return None;
            }
            for _ in (i - start)..3 {
                millis *= 10;
            }
        }
        let offset_minutes = match b.get(i) {
            Some(b'Z' | b'z') if i + 1 == b.len() => 0,
            Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
                let m = num(i + 1, 2)? * 60 + num(i + 4, 2)?;
                if *sign == b'+' { m } else { -m }
            }
            None => 0, // no zone: read as UTC, the convention of the logs that omit it
            _ => return None,
        };
        let days = days_from_civil(year, month, day);
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
        Some(secs * 1000 + millis)
    }

    /// Formats as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    fn format_rfc3339_old(ms: Millis) -> String {
        let secs = ms.div_euclid(1000);
        let millis = ms.rem_euclid(1000);
        let days = secs.div_euclid(86_400);
        let sod = secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
            sod / 3600,
            (sod % 3600) / 60,
            sod % 60
        )
    }

    // Howard Hinnant's algorithms for the proleptic Gregorian calendar.
    fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    fn civil_from_days(z: i64) -> (i64, i64, i64) {
        let z = z + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let y = yoe + era * 400;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = doy - (153 * mp + 2) / 5 + 1;
        let m = if mp < 10 { mp + 3 } else { mp - 9 };
        (if m <= 2 { y + 1 } else { y }, m, d)
    }

    /// Every `YYYY-MM-DD?HH:MM:SS…` string in the files under `dir`, up to a JSON quote, a
    /// backslash (a quote escaped inside a JSON string) or a separator.
    fn timestamps_under(dir: &std::path::Path, out: &mut std::collections::BTreeSet<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                timestamps_under(&path, out);
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else { continue };
            let shape = b"dddd-dd-ddTdd:dd:dd";
            for at in 0..bytes.len().saturating_sub(shape.len()) {
                let fits = shape.iter().zip(&bytes[at..]).all(|(want, got)| match want {
                    b'd' => got.is_ascii_digit(),
                    b'T' => matches!(got, b'T' | b't' | b' '),
                    other => other == got,
                });
                if fits && (at == 0 || !bytes[at - 1].is_ascii_digit()) {
                    let end = (at + shape.len()..bytes.len())
                        .find(|&i| matches!(bytes[i], b'"' | b'\\' | b',' | b' ' | b'\n' | b'<' | b'\''))
                        .unwrap_or(bytes.len())
                        .min(at + shape.len() + 40);
                    out.insert(String::from_utf8_lossy(&bytes[at..end]).into_owned());
                }
            }
        }
    }

    #[test]
    fn jiff_reads_every_recorded_timestamp_to_the_same_millisecond_and_writes_the_same_bytes() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut found = std::collections::BTreeSet::new();
        for dir in ["../shared/corpus", "tests/fixtures", "traces", "src"] {
            timestamps_under(&root.join(dir), &mut found);
        }
        assert!(found.len() > 100, "only {} timestamps found", found.len());
        let mut parsed = 0;
        for s in &found {
            assert_eq!(super::parse_rfc3339(s), parse_rfc3339_old(s), "{s}");
            if let Some(ms) = parse_rfc3339_old(s) {
                assert_eq!(super::format_rfc3339(ms), format_rfc3339_old(ms), "{s}");
                parsed += 1;
            }
        }
        eprintln!("{} timestamp strings, {parsed} parsed, all equal", found.len());
        let step = i64::MAX / 1_000_003;
        let edges = [i64::MIN, i64::MIN + 1, -CYCLE - 1, -CYCLE, -1, 0, 1, CYCLE, i64::MAX - 1, i64::MAX];
        for ms in edges.into_iter().chain((-1_000_003..=1_000_003).map(|k| k * step)) {
            assert_eq!(super::format_rfc3339(ms), format_rfc3339_old(ms), "{ms}");
        }
    }
    const CYCLE: i64 = super::CYCLE_MS;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_epoch_and_a_claude_code_timestamp() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2025-09-03T00:47:19.293Z"), Some(1_756_860_439_293));
    }

    #[test]
    fn offsets_and_long_fractions_are_honoured() {
        let utc = parse_rfc3339("2025-09-03T00:47:19.293Z").unwrap();
        assert_eq!(parse_rfc3339("2025-09-03T09:47:19.293+09:00"), Some(utc));
        assert_eq!(parse_rfc3339("2025-09-03T00:47:19.293456Z"), Some(utc));
        assert_eq!(parse_rfc3339("2025-09-03T00:47:19.2Z"), Some(utc - 93));
    }

    #[test]
    fn garbage_is_rejected_not_guessed() {
        for s in ["", "yesterday", "2025-13-01T00:00:00Z", "2025-09-03T00:47:19.Z", "2025-09-03T00:47:19Zx"] {
            assert_eq!(parse_rfc3339(s), None, "{s}");
        }
    }

    #[test]
    fn formatting_round_trips() {
        for ms in [0, 1_756_860_439_293, -86_400_000, 4_102_444_800_000] {
            assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Some(ms));
        }
        assert_eq!(format_rfc3339(1_756_860_439_293), "2025-09-03T00:47:19.293Z");
    }
}
