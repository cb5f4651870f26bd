//! Durations as people type them on a command line: `10ms`, `1.5s`, `2m`.
use std::time::Duration;

/// MAX_DURATION is the longest duration [`parse_duration`] accepts (about 11.6 days), so that
/// every accepted value also fits in nanoseconds in a `u64` with room to add to a clock.
pub const MAX_DURATION: Duration = Duration::from_secs(1_000_000);

/// UNITS maps each accepted unit suffix to its length in nanoseconds.
const UNITS: [(&str, f64); 8] =
    [("ns", 1.0), ("us", 1e3), ("µs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("min", 60e9), ("h", 3600e9)];

/// parse_duration reads a non-negative duration written as a decimal number followed by a unit
/// (`ns`, `us` or `µs`, `ms`, `s`, `m` or `min`, `h`), or several such parts in a row: `10ms`,
/// `1.5s`, `2m`, `1m30s`. It returns a message saying what is wrong instead of panicking, and
/// rejects values above [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let not_a_duration = || format!("`{text}` is not a duration (write e.g. 10ms, 1.5s, 2m, 1m30s)");
    let mut rest = text;
    let mut nanos = 0.0f64;
    if rest.is_empty() {
        return Err(not_a_duration());
    }
    while !rest.is_empty() {
        let unit_at = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (number, after) = rest.split_at(unit_at);
        if number.is_empty() {
            return Err(not_a_duration());
        }
        let next_at = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let (unit, tail) = after.split_at(next_at);
        if unit.is_empty() {
            return Err(format!("`{text}` has no unit after {number} (write e.g. 10ms, 1.5s, 2m)"));
        }
        let scale = UNITS
            .iter()
            .find(|(name, _)| *name == unit)
            .map(|(_, scale)| *scale)
            .ok_or_else(|| format!("`{text}` has an unknown unit `{unit}` (use ns, us, ms, s, m, h)"))?;
        let value: f64 = number.parse().map_err(|_| not_a_duration())?;
        nanos += value * scale;
        rest = tail;
    }
    if !nanos.is_finite() || nanos > MAX_DURATION.as_nanos() as f64 {
        return Err(format!("`{text}` is longer than {}s", MAX_DURATION.as_secs()));
    }
    Ok(Duration::from_nanos(nanos.round() as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_people_type() {
        let cases: &[(&str, u64)] = &[
            ("10ms", 10_000_000),
            ("1.5s", 1_500_000_000),
            ("2m", 120_000_000_000),
            ("2min", 120_000_000_000),
            ("1h", 3_600_000_000_000),
            ("250us", 250_000),
            ("250µs", 250_000),
            ("17ns", 17),
            ("0ms", 0),
            (" 1.7ms ", 1_700_000),
            ("0.5ms", 500_000),
            ("1m30s", 90_000_000_000),
            ("1s500ms", 1_500_000_000),
        ];
        for (text, nanos) in cases {
            assert_eq!(parse_duration(text), Ok(Duration::from_nanos(*nanos)), "{text}");
        }
    }

    #[test]
    fn rejects_with_a_reason() {
        let cases: &[(&str, &str)] = &[
            ("10", "no unit"),
            ("1m30", "no unit"),
            ("", "is not a duration"),
            ("ms", "is not a duration"),
            ("-1ms", "is not a duration"),
            ("soon", "is not a duration"),
            ("1.2.3s", "is not a duration"),
            ("10 ms", "unknown unit"),
            ("10sec", "unknown unit"),
            ("1e3ms", "unknown unit"),
            ("99999999h", "longer than"),
        ];
        for (text, reason) in cases {
            let err = parse_duration(text).err().unwrap_or_default();
            assert!(err.contains(reason), "{text}: {err}");
        }
    }
}
