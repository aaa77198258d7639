//! Unix seconds to and from proleptic Gregorian calendar dates (UTC), for the `date` of LaMP
//! profile items and the day-granular dates of the news corpus.

/// The times a document may carry, as unix seconds (UTC): from 1900-01-01 00:00:00 to
/// 2200-12-31 23:59:59. A time outside is a damaged record (a sentinel, an overflow, a time
/// in milliseconds), not a date: [`read_corpus`](crate::read_corpus) refuses it
/// ([`Error::BadTime`](crate::Error::BadTime)) and the converters skip it, so no LaMP file
/// gets a date such as `-292277022657-01-27`.
///
/// ```
/// use pgraphrag_corpora::{TIMES, unix_of_date};
/// assert_eq!(*TIMES.start(), unix_of_date(1900, 1, 1).unwrap());
/// assert_eq!(*TIMES.end() + 1, unix_of_date(2201, 1, 1).unwrap());
/// assert!(TIMES.contains(&0) && !TIMES.contains(&i64::MIN) && !TIMES.contains(&1_700_000_000_000));
/// ```
pub const TIMES: std::ops::RangeInclusive<i64> = -2_208_988_800..=7_289_654_399;

/// Days since 1970-01-01 of a calendar date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The calendar date of a day number (Howard Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

/// `YYYY-MM-DD` (UTC) of a time in unix seconds: the `date` of a LaMP profile item.
///
/// ```
/// assert_eq!(pgraphrag_corpora::ymd(0), "1970-01-01");
/// assert_eq!(pgraphrag_corpora::ymd(1_030_015_585), "2002-08-22");
/// ```
pub fn ymd(unix_seconds: i64) -> String {
    let (y, m, d) = civil_from_days(unix_seconds.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// Unix seconds of midnight UTC of a calendar date; `None` for a month or day out of range.
///
/// ```
/// assert_eq!(pgraphrag_corpora::unix_of_date(2017, 2, 7), Some(1_486_425_600));
/// assert_eq!(pgraphrag_corpora::unix_of_date(2017, 2, 30), None);
/// ```
pub fn unix_of_date(year: i64, month: u32, day: u32) -> Option<i64> {
    if !(1..=12).contains(&month) || day == 0 || day > 31 {
        return None;
    }
    let days = days_from_civil(year, month, day);
    // A day past the month's end rolls over: reject it.
    (civil_from_days(days) == (year, month, day)).then_some(days * 86_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_across_leap_years_and_eras() {
        for days in (-800_000..800_000).step_by(997) {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        assert_eq!(ymd(951_782_400), "2000-02-29");
        assert_eq!(unix_of_date(1900, 2, 29), None);
        assert_eq!(ymd(-1), "1969-12-31");
    }
}
