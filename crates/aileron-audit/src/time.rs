//! Just enough RFC 3339 for the audit log: formatting the current time,
//! parsing record times and filter bounds, and relative durations.
//! Times are nanoseconds since the Unix epoch, as `i128`.

use crate::Error;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

const NANOS_PER_SEC: i128 = 1_000_000_000;

/// Nanoseconds since the Unix epoch (negative before it).
pub(crate) fn to_nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_nanos() as i128,
        Err(e) => -(e.duration().as_nanos() as i128),
    }
}

/// `t` as RFC 3339 in UTC with milliseconds: `2026-11-22T10:00:00.123Z`.
pub fn format_rfc3339(t: SystemTime) -> String {
    let nanos = to_nanos(t);
    let secs = nanos.div_euclid(NANOS_PER_SEC) as i64;
    let millis = nanos.rem_euclid(NANOS_PER_SEC) / 1_000_000;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The current time as RFC 3339, for [`crate::AuditRecord::time`].
pub fn now_rfc3339() -> String {
    format_rfc3339(SystemTime::now())
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)` (also with `t`, a space,
/// `z`), or a bare `YYYY-MM-DD` meaning midnight UTC.
pub(crate) fn parse_rfc3339(s: &str) -> Option<i128> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().all(u8::is_ascii_digit).then(|| {
            part.iter()
                .fold(0i64, |acc, &c| acc * 10 + i64::from(c - b'0'))
        })
    };
    let year = num(0, 4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let month = num(5, 2)?;
    let day = num(8, 2)?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let date = days_from_civil(year, month, day) as i128 * 86_400;
    if b.len() == 10 {
        return Some(date * NANOS_PER_SEC);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.get(13) != Some(&b':') || b.get(16) != Some(&b':')
    {
        return None;
    }
    let (hour, min, sec) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if hour > 23 || min > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac: i128 = 0;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        let mut scale = NANOS_PER_SEC;
        while let Some(c) = b.get(i).filter(|c| c.is_ascii_digit()) {
            if scale > 1 {
                scale /= 10;
                frac += i128::from(c - b'0') * scale;
            }
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let offset = match b.get(i)? {
        b'Z' | b'z' if i + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
            let (oh, om) = (num(i + 1, 2)?, num(i + 4, 2)?);
            if oh > 23 || om > 59 {
                return None;
            }
            let o = (oh * 3600 + om * 60) as i128;
            if *sign == b'-' { -o } else { o }
        }
        _ => return None,
    };
    let secs = date + (hour * 3600 + min * 60 + sec) as i128 - offset;
    Some(secs * NANOS_PER_SEC + frac)
}

/// `10s`, `10m`, `2h`, `1d`, `1w`, or several of them: `1h30m`.
pub(crate) fn parse_relative(s: &str) -> Option<Duration> {
    let mut total: u64 = 0;
    let mut digits = String::new();
    let mut any = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit: u64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return None,
        };
        let n: u64 = digits.parse().ok()?;
        digits.clear();
        total = total.checked_add(n.checked_mul(unit)?)?;
        any = true;
    }
    (any && digits.is_empty()).then(|| Duration::from_secs(total))
}

/// A filter bound: an RFC 3339 time, a date, `now`, or a duration before `now`.
pub(crate) fn parse_bound(s: &str, now: SystemTime) -> Result<i128, Error> {
    let s = s.trim();
    if s == "now" {
        return Ok(to_nanos(now));
    }
    if let Some(d) = parse_relative(s) {
        return Ok(to_nanos(now) - d.as_nanos() as i128);
    }
    parse_rfc3339(s).ok_or_else(|| Error::BadTime { text: s.to_owned() })
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
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
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn formats_and_parses_round_trip() {
        for secs in [0, 951_782_400, 1_700_000_000, 1_795_348_800, 4_102_444_800] {
            let t = at(secs) + Duration::from_millis(123);
            let s = format_rfc3339(t);
            assert_eq!(parse_rfc3339(&s), Some(to_nanos(t)), "{s}");
        }
        assert_eq!(format_rfc3339(at(0)), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_rfc3339(at(951_782_400)), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn parses_offsets_fractions_and_dates() {
        let z = parse_rfc3339("2026-11-22T10:00:00Z").unwrap();
        assert_eq!(parse_rfc3339("2026-11-22T12:00:00+02:00"), Some(z));
        assert_eq!(parse_rfc3339("2026-11-22 09:30:00-00:30"), Some(z));
        assert_eq!(
            parse_rfc3339("2026-11-22t10:00:00.5z"),
            Some(z + 500_000_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22T10:00:00.123456789123Z"),
            Some(z + 123_456_789)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22"),
            Some(z - 10 * 3600 * NANOS_PER_SEC)
        );
        for bad in [
            "",
            "2026-13-01",
            "2026-02-30T00:00:00Z",
            "2026-11-22T10:00:00",
            "2026-11-22T10:00:00.Z",
            "2026-11-22T24:00:00Z",
            "2026-11-22T10:00:00+0200",
            "yesterday",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn relative_durations() {
        assert_eq!(parse_relative("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_relative("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse_relative("2d"), Some(Duration::from_secs(172_800)));
        assert_eq!(parse_relative("1w"), Some(Duration::from_secs(604_800)));
        assert_eq!(parse_relative("45s"), Some(Duration::from_secs(45)));
        for bad in ["", "10", "m", "10x", "1h30", "-1h"] {
            assert_eq!(parse_relative(bad), None, "{bad}");
        }
        let now = at(1_000_000);
        assert_eq!(
            parse_bound("10m", now).ok(),
            Some((1_000_000 - 600) * NANOS_PER_SEC)
        );
        assert_eq!(
            parse_bound("now", now).ok(),
            Some(1_000_000 * NANOS_PER_SEC)
        );
        assert!(
            parse_bound("soon", now)
                .unwrap_err()
                .to_string()
                .contains("soon")
        );
    }
}
