//! RFC 3339 timestamps as milliseconds since the Unix epoch, without a date-time dependency.
//!
//! Traces record times as ISO-8601 strings (`2025-09-03T00:47:19.293Z`, sometimes with an offset or
//! more fractional digits). Only differences between timestamps matter to ctxbudget (idle gaps,
//! cache TTLs), so a small exact parser is enough. Pure functions, no I/O.

/// Milliseconds since the Unix epoch (UTC).
pub type Millis = i64;

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`; a space may replace `T`. Returns `None` for
/// anything else.
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
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
pub fn format_rfc3339(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let millis = ms.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z", sod / 3600, (sod % 3600) / 60, sod % 60)
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
    fn formatting_round_trips() {
        for ms in [0, 1_756_860_439_293, -86_400_000, 4_102_444_800_000] {
            assert_eq!(parse_rfc3339(&format_rfc3339(ms)), Some(ms));
        }
        assert_eq!(format_rfc3339(1_756_860_439_293), "2025-09-03T00:47:19.293Z");
    }
}
