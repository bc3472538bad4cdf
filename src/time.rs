//! RFC 3339 timestamps as milliseconds since the Unix epoch, read and written with `jiff`.
//!
//! Traces record times as ISO-8601 strings (`2025-09-03T00:47:19.293Z`, sometimes with an offset,
//! no zone, or more fractional digits). Only differences between timestamps matter to ctxbudget
//! (idle gaps, cache TTLs), so `Millis` stays the crate's type and jiff does the calendar. Pure
//! functions, no I/O.

/// Milliseconds since the Unix epoch (UTC).
pub type Millis = i64;

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` with jiff's RFC 3339/Temporal parser; a space
/// may replace `T`, and a time without a zone is read as UTC (the convention of the logs that omit
/// it). The result is floored to the millisecond. Returns `None` for anything jiff rejects, for a
/// date without a time, and for a bracketed time-zone annotation (`[Europe/Paris]`), which this
/// build of jiff carries no database to resolve.
///
/// Where jiff's grammar is wider or narrower than RFC 3339, jiff decides (no trace seen holds these
/// forms): it also accepts `HH:MM` without seconds, compact offsets (`+0900`, `+09`) and the basic
/// format (`20250903T004719Z`); it refuses a day past the month's end (`02-31`), more than nine
/// fractional digits and a time outside its range (after `9999-12-30T22:00:00.999999999Z`, before
/// `-009999-01-02T01:59:59Z`), and reads a leap second `:60` as `:59`.
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
    if (0..=LAST_FOUR_DIGIT_YEAR_MS).contains(&ms) {
        return format_from_epoch(ms);
    }
    let cycles = ms.div_euclid(CYCLE_MS);
    let within =
        jiff::Timestamp::from_millisecond(ms.rem_euclid(CYCLE_MS)).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
    let t = jiff::tz::Offset::UTC.to_datetime(within);
    let year = i64::from(t.year()) + cycles * 400;
    let (month, day, hour, minute) = (t.month(), t.day(), t.hour(), t.minute());
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{:02}.{:03}Z", t.second(), t.millisecond())
}

/// `9999-12-31T23:59:59.999Z`: up to it, [`format_from_epoch`] writes every time.
const LAST_FOUR_DIGIT_YEAR_MS: Millis = 253_402_300_799_999;

/// [`format_rfc3339`] of a time from 1970 to 9999, the same bytes with integer arithmetic only:
/// every replayed request's row carries its time, and jiff's calendar and `format!` made a
/// recommendation's grid spend a seventh of its instructions here. The date is Howard Hinnant's
/// `civil_from_days` (days since 1970-01-01 to proleptic Gregorian year, month, day).
fn format_from_epoch(ms: Millis) -> String {
    let (days, in_day) = (ms / 86_400_000, ms % 86_400_000);
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let fields = [
        (year, 4, b'-'),
        (month, 2, b'-'),
        (day, 2, b'T'),
        (in_day / 3_600_000, 2, b':'),
        (in_day / 60_000 % 60, 2, b':'),
        (in_day / 1000 % 60, 2, b'.'),
        (in_day % 1000, 3, b'Z'),
    ];
    let mut out = [0u8; 24];
    let mut at = 0;
    for (mut value, width, after) in fields {
        for k in (at..at + width).rev() {
            out[k] = b'0' + (value % 10) as u8;
            value /= 10;
        }
        out[at + width] = after;
        at += width + 1;
    }
    // Digits and ASCII marks only: always UTF-8.
    String::from_utf8_lossy(&out).into_owned()
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
    fn forms_no_trace_holds_are_read_as_jiff_reads_them() {
        let utc = parse_rfc3339("2025-09-03T00:47:00Z").unwrap();
        assert_eq!(parse_rfc3339("2025-09-03T00:47Z"), Some(utc));
        assert_eq!(parse_rfc3339("2025-09-03T09:47:00+0900"), Some(utc));
        assert_eq!(parse_rfc3339("2025-09-03T09:47:00+09"), Some(utc));
        assert_eq!(parse_rfc3339("20250903T004700Z"), Some(utc));
        assert_eq!(parse_rfc3339("2025-09-03T00:47:60Z"), Some(utc + 59_000));
        for s in [
            "2025-02-31T00:00:00Z",
            "2025-09-03T00:47:00.1234567891Z",
            "2025-09-03",
            "2025-09-03T00:47:00Z[UTC]",
            "9999-12-31T00:00:00Z",
        ] {
            assert_eq!(parse_rfc3339(s), None, "{s}");
        }
    }

    #[test]
    fn formatting_round_trips() {
        for ms in [0, 1_756_860_439_293, -86_400_000, -1, 4_102_444_800_000, 253_402_207_200_999] {
            assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Some(ms));
        }
        assert_eq!(format_rfc3339(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_rfc3339(253_402_300_800_000), "10000-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(1_756_860_439_293), "2025-09-03T00:47:19.293Z");
    }

    #[test]
    fn the_integer_path_writes_what_jiff_and_format_write() {
        // What `format_rfc3339` wrote for every time before the integer path: jiff's calendar on
        // the time moved into 1970..2370, and `format!`.
        let by_format = |ms: Millis| {
            let cycles = ms.div_euclid(CYCLE_MS);
            let within = jiff::Timestamp::from_millisecond(ms.rem_euclid(CYCLE_MS)).unwrap();
            let t = jiff::tz::Offset::UTC.to_datetime(within);
            let year = i64::from(t.year()) + cycles * 400;
            let (month, day, hour, minute) = (t.month(), t.day(), t.hour(), t.minute());
            format!(
                "{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{:02}.{:03}Z",
                t.second(),
                t.millisecond()
            )
        };
        // From the epoch to 9999's last millisecond in 64,644 strides of 3,919,999,997 ms (about
        // 45 days, so every field takes many values), then 2000-02-29 and the ends.
        let mut ms = 0;
        while ms <= LAST_FOUR_DIGIT_YEAR_MS {
            assert_eq!(format_from_epoch(ms), by_format(ms), "{ms}");
            ms += 3_919_999_997;
        }
        for ms in [0, 1, 951_782_400_000, 951_868_799_999, 1_756_860_439_293, LAST_FOUR_DIGIT_YEAR_MS] {
            assert_eq!(format_from_epoch(ms), by_format(ms), "{ms}");
        }
        assert_eq!(format_rfc3339(-62_167_219_200_001), "-001-12-31T23:59:59.999Z");
    }
}
