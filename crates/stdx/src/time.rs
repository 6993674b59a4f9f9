//! UTC dates without a date library: the few formats ironbees prints and stores.

/// `2024-03-01` from Unix seconds (UTC).
pub fn utc_date(secs: i64) -> String {
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!("{y:04}-{m:02}-{d:02}")
}

/// `2024-03-01T12:34:56.789Z` (RFC 3339, UTC) from milliseconds since the epoch.
pub fn rfc3339_utc(ms: i64) -> String {
    let secs = ms.div_euclid(1000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let s = secs.rem_euclid(86_400);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s % 3600 / 60,
        s % 60,
        ms.rem_euclid(1000)
    )
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Howard Hinnant's `civil_from_days`: (year, month, day) of a day count since
/// 1970-01-01, exact for the proleptic Gregorian calendar.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let cases = [
            (0_i64, "1970-01-01", "1970-01-01T00:00:00.000Z"),
            (1_709_251_200_000, "2024-03-01", "2024-03-01T00:00:00.000Z"),
            (951_782_400_000, "2000-02-29", "2000-02-29T00:00:00.000Z"),
            (1_795_000_000_123, "2026-11-18", "2026-11-18T11:06:40.123Z"),
            (-1, "1969-12-31", "1969-12-31T23:59:59.999Z"),
        ];
        for (ms, date, stamp) in cases {
            assert_eq!(utc_date(ms.div_euclid(1000)), date, "{ms}");
            assert_eq!(rfc3339_utc(ms), stamp, "{ms}");
        }
    }
}
