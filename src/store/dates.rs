//! Dates for the score queries: the store counts microseconds since the Unix
//! epoch, people write `2024-05-01`. Only UTC is spoken, so that a date means
//! the same instant whatever the server's time zone; that keeps this small
//! enough not to need a calendar crate.

/// Microseconds in a second.
const US_PER_SEC: i64 = 1_000_000;

/// Seconds in a day.
const SECS_PER_DAY: i64 = 86_400;

/// A text that is not a date or time of a form [`parse_time`] reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not a date: write YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ (UTC) or Unix seconds")]
pub struct NotADate(pub String);

/// Reads a date or time, in microseconds since the epoch: `YYYY-MM-DD`
/// (midnight UTC), `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339 in UTC) or a whole number
/// of seconds since the epoch. The error says which forms are read.
pub fn parse_time(text: &str) -> Result<i64, NotADate> {
    let text = text.trim();
    let bad = || NotADate(text.to_string());
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Unix seconds; the bound keeps the microseconds within an i64.
        let secs: i64 = text.parse().map_err(|_| bad())?;
        return secs.checked_mul(US_PER_SEC).filter(|_| secs <= 253_402_300_799).ok_or_else(bad);
    }
    let (date, time) = match text.split_once(['T', 't']) {
        Some((date, time)) => (date, Some(time)),
        None => (text, None),
    };
    let days = parse_date(date).ok_or_else(bad)?;
    let secs = match time {
        None => 0,
        Some(time) => parse_clock(time).ok_or_else(bad)?,
    };
    Ok((days * SECS_PER_DAY + secs) * US_PER_SEC)
}

/// `YYYY-MM-DD` as days since the epoch, if it names a real day.
fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.split('-');
    let year = number(parts.next()?, 4)?;
    let month = number(parts.next()?, 2)?;
    let day = number(parts.next()?, 2)?;
    if parts.next().is_some() || !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    Some(days_from_civil(year, month, day))
}

/// `HH:MM:SSZ` as seconds into the day.
fn parse_clock(text: &str) -> Option<i64> {
    let clock = text.strip_suffix(['Z', 'z'])?;
    let mut parts = clock.split(':');
    let hour = number(parts.next()?, 2)?;
    let minute = number(parts.next()?, 2)?;
    let second = number(parts.next()?, 2)?;
    if parts.next().is_some() || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    Some(hour * 3600 + minute * 60 + second)
}

/// Exactly `width` ASCII digits.
fn number(text: &str, width: usize) -> Option<i64> {
    (text.len() == width && text.bytes().all(|b| b.is_ascii_digit())).then(|| text.parse().ok()).flatten()
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date. Years are counted
/// from March, so that the leap day is the last day of its year and the
/// length of the months before a day follows one formula.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let march_month = (month + 9) % 12; // March is 0
    let day_of_year = (153 * march_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    // 719468 days separate 0000-03-01 from 1970-01-01.
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day since the epoch: the inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = if march_month < 10 { march_month + 3 } else { march_month - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A time in microseconds since the epoch as `YYYY-MM-DDTHH:MM:SSZ`, the
/// form [`parse_time`] reads (the fraction of a second is dropped).
pub fn format_time(us: i64) -> String {
    let secs = us.div_euclid(US_PER_SEC);
    let (year, month, day) = civil_from_days(secs.div_euclid(SECS_PER_DAY));
    let of_day = secs.rem_euclid(SECS_PER_DAY);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", of_day / 3600, of_day / 60 % 60, of_day % 60)
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
            let us = days * SECS_PER_DAY * US_PER_SEC + 3_723_000_001;
            let text = format_time(us);
            assert_eq!(parse_time(&text), Ok(us - 1), "{text}");
        }
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(-1), "1969-12-31T23:59:59Z");
    }
}
