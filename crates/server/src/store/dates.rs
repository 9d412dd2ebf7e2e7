//! Dates for the score queries: the store counts microseconds since the Unix
//! epoch, people write `2024-05-01`. Only UTC is spoken, so that a date means
//! the same instant whatever the server's time zone. The calendar is the
//! `time` crate's; this module says which forms are read and written.

use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime};

/// Microseconds in a second.
const US_PER_SEC: i64 = 1_000_000;

/// The last second `time` writes a date for (9999-12-31T23:59:59Z): the
/// bound on Unix seconds read, which keeps their microseconds within an i64.
const LAST_SECOND: i64 = 253_402_300_799;

/// A text that is not a date or time of a form [`parse_time`] reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a date: write YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (UTC) or Unix seconds")]
pub struct NotADate(pub String);

/// Reads a date or time, in microseconds since the epoch: `YYYY-MM-DD`
/// (midnight UTC), `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339 in UTC, with no fraction
/// and no other offset) or a whole number of seconds since the epoch. The
/// error says which forms are read.
pub fn parse_time(text: &str) -> Result<i64, NotADate> {
    let text = text.trim();
    let bad = || NotADate(text.to_string());
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        let secs: i64 = text.parse().map_err(|_| bad())?;
        return secs.checked_mul(US_PER_SEC).filter(|_| secs <= LAST_SECOND).ok_or_else(bad);
    }
    // Four digits of year, then two of each other field: nothing shorter, no
    // sign. (RFC 3339 lets the `T` and the `Z` be lower case.)
    if !text.starts_with(|c: char| c.is_ascii_digit()) {
        return Err(bad());
    }
    let upper = text.to_ascii_uppercase();
    let at = if upper.len() == "YYYY-MM-DD".len() {
        Date::parse(&upper, format_description!("[year]-[month]-[day]")).map(|d| d.midnight())
    } else {
        PrimitiveDateTime::parse(&upper, format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z"))
    };
    let at = at.map_err(|_| bad())?.assume_utc();
    Ok(at.unix_timestamp() * US_PER_SEC)
}

/// A time in microseconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`, the
/// form [`parse_time`] reads (the fraction of a second is dropped). A time
/// beyond the year 9999, which no clock gives, is written as its seconds.
pub fn format_time(us: i64) -> String {
    let secs = us.div_euclid(US_PER_SEC);
    OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|at| at.format(format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]Z")).ok())
        .unwrap_or_else(|| secs.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_forms_read_as_the_same_instant() {
        let day = 1_714_521_600 * US_PER_SEC; // 2024-05-01T00:00:00Z
        assert_eq!(parse_time("2024-05-01"), Ok(day));
        assert_eq!(parse_time("2024-05-01T00:00:00Z"), Ok(day));
        assert_eq!(parse_time("1714521600"), Ok(day));
        assert_eq!(parse_time("2024-05-01T13:14:15Z"), Ok(day + (13 * 3600 + 14 * 60 + 15) * US_PER_SEC));
        assert_eq!(parse_time("1970-01-01"), Ok(0));
        assert_eq!(parse_time("2000-02-29"), Ok(951_782_400 * US_PER_SEC));
    }

    #[test]
    fn impossible_dates_and_other_forms_are_refused() {
        for bad in [
            "",
            "2023-02-29",
            "1900-02-29",
            "2024-13-01",
            "2024-04-31",
            "2024-5-1",
            "2024-05-01T25:00:00Z",
            "2024-05-01T10:00:00",
            "2024-05-01T10:00:00+02:00",
            "2024-05-01 10:00:00Z",
            "-5",
            "1.5",
            "yesterday",
            "99999999999999999999",
        ] {
            let e = parse_time(bad).expect_err(bad);
            assert_eq!(e, NotADate(bad.trim().to_string()));
            assert!(e.to_string().contains("YYYY-MM-DD"), "{bad}: {e}");
        }
    }

    #[test]
    fn formatting_inverts_parsing_day_by_day() {
        // Every day of four centuries around the epoch, leap days included.
        for days in -80_000..80_000i64 {
            let us = days * 86_400 * US_PER_SEC + 3_723_000_001;
            let text = format_time(us);
            assert_eq!(parse_time(&text), Ok(us - 1), "{text}");
        }
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(-1), "1969-12-31T23:59:59Z");
    }
}
