//! How long a request holds a service slot: fixed, or drawn from a distribution.
use std::fmt;
use std::time::Duration;

use crate::config::duration::{parse_duration, MAX_DURATION};
use crate::model::rng::Rng;

/// MAX_SIGMA is the largest log-normal shape accepted; beyond it the mean is dominated by
/// draws so rare that a test never sees the capacity it asked for.
pub const MAX_SIGMA: f64 = 4.0;

/// ServiceTime is the time one request holds a service slot, as written after
/// `--service-time`: `2ms` (fixed), `exp:2ms` (exponential with that mean), `uniform:1ms-3ms`,
/// or `lognormal:MEDIAN,SIGMA` (e.g. `lognormal:2ms,0.5`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServiceTime {
    /// Fixed: every request takes exactly this long.
    Fixed(Duration),
    /// Exponential: memoryless, with this mean (an M/M/N queue when arrivals are Poisson).
    Exponential(Duration),
    /// Uniform: any length in [low, high], equally likely.
    Uniform {
        /// low is the shortest service time.
        low: Duration,
        /// high is the longest service time.
        high: Duration,
    },
    /// LogNormal: exp(N(ln median, sigma²)); a long right tail like real services.
    LogNormal {
        /// median is the 50th percentile.
        median: Duration,
        /// sigma is the standard deviation of the logarithm.
        sigma: f64,
    },
}

impl ServiceTime {
    /// parse reads the `--service-time` syntax; the error says what is wrong with the text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let Some((kind, rest)) = text.split_once(':') else {
            return parse_duration(text).map(ServiceTime::Fixed);
        };
        match kind {
            "fixed" => parse_duration(rest).map(ServiceTime::Fixed),
            "exp" => parse_duration(rest).map(ServiceTime::Exponential),
            "uniform" => {
                let (low, high) = rest
                    .split_once('-')
                    .ok_or_else(|| format!("`{text}`: write uniform:LOW-HIGH, e.g. uniform:1ms-3ms"))?;
                let (low, high) = (parse_duration(low)?, parse_duration(high)?);
                if low > high {
                    return Err(format!("`{text}`: LOW is above HIGH"));
                }
                Ok(ServiceTime::Uniform { low, high })
            }
            "lognormal" => {
                let (median, sigma) = rest
                    .split_once(',')
                    .ok_or_else(|| format!("`{text}`: write lognormal:MEDIAN,SIGMA, e.g. lognormal:2ms,0.5"))?;
                let median = parse_duration(median)?;
                let sigma: f64 =
                    sigma.trim().parse().map_err(|_| format!("`{text}`: SIGMA `{sigma}` is not a number"))?;
                if !(0.0..=MAX_SIGMA).contains(&sigma) {
                    return Err(format!("`{text}`: SIGMA must be between 0 and {MAX_SIGMA}"));
                }
                Ok(ServiceTime::LogNormal { median, sigma })
            }
            other => {
                Err(format!("`{text}`: unknown distribution `{other}` (use a duration, exp:, uniform: or lognormal:)"))
            }
        }
    }

    /// mean is the expected service time; a pool of N slots serves at most N / mean requests
    /// per second.
    pub fn mean(&self) -> Duration {
        match *self {
            ServiceTime::Fixed(d) | ServiceTime::Exponential(d) => d,
            ServiceTime::Uniform { low, high } => (low + high) / 2,
            ServiceTime::LogNormal { median, sigma } => {
                Duration::from_secs_f64(median.as_secs_f64() * (sigma * sigma / 2.0).exp())
            }
        }
    }

    /// sample_nanos draws one service time in nanoseconds, capped at [`MAX_DURATION`].
    pub fn sample_nanos(&self, rng: &mut Rng) -> u64 {
        let nanos = match *self {
            ServiceTime::Fixed(d) => return nanos_of(d),
            ServiceTime::Exponential(mean) => -(1.0 - rng.next_f64()).ln() * nanos_of(mean) as f64,
            ServiceTime::Uniform { low, high } => {
                let (low, high) = (nanos_of(low) as f64, nanos_of(high) as f64);
                low + rng.next_f64() * (high - low)
            }
            ServiceTime::LogNormal { median, sigma } => nanos_of(median) as f64 * (sigma * rng.standard_normal()).exp(),
        };
        nanos.round().clamp(0.0, nanos_of(MAX_DURATION) as f64) as u64
    }
}

impl fmt::Display for ServiceTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServiceTime::Fixed(d) => write!(f, "{d:?}"),
            ServiceTime::Exponential(d) => write!(f, "exp:{d:?}"),
            ServiceTime::Uniform { low, high } => write!(f, "uniform:{low:?}-{high:?}"),
            ServiceTime::LogNormal { median, sigma } => write!(f, "lognormal:{median:?},{sigma}"),
        }
    }
}

/// nanos_of converts a duration no longer than [`MAX_DURATION`] to nanoseconds.
pub(crate) fn nanos_of(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn parses_each_form() {
        let cases: &[(&str, ServiceTime)] = &[
            ("2ms", ServiceTime::Fixed(2 * MS)),
            ("fixed:2ms", ServiceTime::Fixed(2 * MS)),
            ("exp:2ms", ServiceTime::Exponential(2 * MS)),
            ("uniform:1ms-3ms", ServiceTime::Uniform { low: MS, high: 3 * MS }),
            ("lognormal:2ms,0.5", ServiceTime::LogNormal { median: 2 * MS, sigma: 0.5 }),
            ("lognormal:2ms, 0", ServiceTime::LogNormal { median: 2 * MS, sigma: 0.0 }),
        ];
        for (text, want) in cases {
            assert_eq!(ServiceTime::parse(text).as_ref(), Ok(want), "{text}");
        }
    }

    #[test]
    fn rejects_with_a_reason() {
        let cases: &[(&str, &str)] = &[
            ("2", "no unit"),
            ("poisson:2ms", "unknown distribution"),
            ("uniform:1ms", "uniform:LOW-HIGH"),
            ("uniform:3ms-1ms", "LOW is above HIGH"),
            ("uniform:1ms-x", "is not a duration"),
            ("lognormal:2ms", "lognormal:MEDIAN,SIGMA"),
            ("lognormal:2ms,abc", "not a number"),
            ("lognormal:2ms,-1", "between 0"),
            ("lognormal:2ms,9", "between 0"),
            ("exp:fast", "is not a duration"),
        ];
        for (text, reason) in cases {
            let err = ServiceTime::parse(text).err().unwrap_or_default();
            assert!(err.contains(reason), "{text}: {err}");
        }
    }

    #[test]
    fn sample_mean_matches_mean() {
        let cases = [
            ServiceTime::Fixed(2 * MS),
            ServiceTime::Exponential(2 * MS),
            ServiceTime::Uniform { low: MS, high: 3 * MS },
            ServiceTime::LogNormal { median: 2 * MS, sigma: 0.5 },
        ];
        for dist in cases {
            let mut rng = Rng::seeded(1);
            let n = 200_000u64;
            let total: u64 = (0..n).map(|_| dist.sample_nanos(&mut rng)).sum();
            let got = total as f64 / n as f64;
            let want = dist.mean().as_nanos() as f64;
            assert!((got / want - 1.0).abs() < 0.01, "{dist}: mean {got} vs {want}");
        }
    }

    #[test]
    fn lognormal_mean_is_above_median() {
        let d = ServiceTime::LogNormal { median: 2 * MS, sigma: 1.0 };
        let want = 2e-3 * 0.5f64.exp();
        assert!((d.mean().as_secs_f64() - want).abs() < 1e-9);
    }
}
