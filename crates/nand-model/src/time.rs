//! Simulated time: [`SimTime`] (an instant) and [`Nanos`] (a duration), both integer
//! nanoseconds. There is no floating-point time anywhere in Lamina.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant of simulated time: nanoseconds since the start of the trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SimTime(pub u64);

/// A duration of simulated time in nanoseconds.
///
/// In configuration files a duration is written either as an integer number of
/// nanoseconds or as a string with a unit: `"70ns"`, `"78us"`, `"1.5ms"`, `"2s"`
/// (`µs` is accepted for `us`). Decimal strings are converted exactly; a value that
/// is not a whole number of nanoseconds is rejected rather than rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Nanos(pub u64);

impl SimTime {
    /// The start of the simulation.
    pub const ZERO: SimTime = SimTime(0);
    /// The largest representable instant (used as "never").
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Nanoseconds since the start of the trace.
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0
    }

    /// Duration from `earlier` to `self`; panics if `earlier` is later (time never runs
    /// backwards in Lamina, so that would be a bug).
    #[inline]
    pub fn since(self, earlier: SimTime) -> Nanos {
        assert!(self.0 >= earlier.0, "time went backwards: {} < {}", self.0, earlier.0);
        Nanos(self.0 - earlier.0)
    }

    /// Duration from `earlier` to `self`, or zero if `earlier` is later.
    #[inline]
    pub fn saturating_since(self, earlier: SimTime) -> Nanos {
        Nanos(self.0.saturating_sub(earlier.0))
    }
}

impl Nanos {
    /// A zero-length duration.
    pub const ZERO: Nanos = Nanos(0);

    /// Construct from microseconds.
    #[inline]
    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }

    /// Construct from milliseconds.
    #[inline]
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }

    /// The duration in nanoseconds.
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0
    }

    /// Multiply by an integer count (e.g. bytes × ns-per-byte).
    #[inline]
    pub const fn times(self, n: u64) -> Nanos {
        Nanos(self.0 * n)
    }

    /// Scale by a fixed-point factor in parts per million, rounding to nearest
    /// (half away from zero). `scale_ppm(1_000_000)` is the identity.
    #[inline]
    pub const fn scale_ppm(self, ppm: u64) -> Nanos {
        let wide = self.0 as u128 * ppm as u128;
        Nanos(((wide + 500_000) / 1_000_000) as u64)
    }

    /// Parse a duration string such as `"78us"`, `"1.5ms"`, `"70"` (ns).
    pub fn parse(text: &str) -> Result<Nanos, DurationParseError> {
        let s = text.trim();
        let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(s.len());
        let (num, unit) = s.split_at(split);
        let scale: u64 = match unit.trim() {
            "" | "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            _ => return Err(DurationParseError(text.to_owned())),
        };
        let (int_part, frac_part) = match num.split_once('.') {
            Some((i, f)) => (i, f),
            None => (num, ""),
        };
        if int_part.is_empty() && frac_part.is_empty() {
            return Err(DurationParseError(text.to_owned()));
        }
        let bad = || DurationParseError(text.to_owned());
        let int: u64 = if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| bad())? };
        let mut total = int.checked_mul(scale).ok_or_else(bad)?;
        if !frac_part.is_empty() {
            if !frac_part.bytes().all(|b| b.is_ascii_digit()) || frac_part.len() > 9 {
                return Err(bad());
            }
            let frac: u64 = frac_part.parse().map_err(|_| bad())?;
            let denom = 10u64.pow(frac_part.len() as u32);
            let scaled = frac as u128 * scale as u128;
            if scaled % denom as u128 != 0 {
                return Err(bad());
            }
            total = total.checked_add((scaled / denom as u128) as u64).ok_or_else(bad)?;
        }
        Ok(Nanos(total))
    }
}

/// What every rejected duration is told it should look like (config files, `--set`).
pub const DURATION_EXPECTED: &str = "expected a non-negative duration like 78us (an integer number of ns, or a \
     number with unit ns, us, ms or s that is a whole number of ns)";

/// A duration string that could not be parsed (or is not a whole number of ns).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {0:?}: {DURATION_EXPECTED}")]
pub struct DurationParseError(pub String);

impl Add<Nanos> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, rhs: Nanos) -> SimTime {
        SimTime(self.0 + rhs.0)
    }
}

impl AddAssign<Nanos> for SimTime {
    #[inline]
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 += rhs.0;
    }
}

impl Sub<SimTime> for SimTime {
    type Output = Nanos;
    #[inline]
    fn sub(self, rhs: SimTime) -> Nanos {
        self.since(rhs)
    }
}

impl Add for Nanos {
    type Output = Nanos;
    #[inline]
    fn add(self, rhs: Nanos) -> Nanos {
        Nanos(self.0 + rhs.0)
    }
}

impl AddAssign for Nanos {
    #[inline]
    fn add_assign(&mut self, rhs: Nanos) {
        self.0 += rhs.0;
    }
}

impl Sub for Nanos {
    type Output = Nanos;
    #[inline]
    fn sub(self, rhs: Nanos) -> Nanos {
        Nanos(self.0.checked_sub(rhs.0).expect("negative duration"))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

impl fmt::Display for Nanos {
    /// Prints the largest unit that represents the value exactly (`78us`, `1300us`,
    /// `15ms`), so printed configs round-trip through [`Nanos::parse`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v != 0 && v % 1_000_000_000 == 0 {
            write!(f, "{}s", v / 1_000_000_000)
        } else if v != 0 && v % 1_000_000 == 0 {
            write!(f, "{}ms", v / 1_000_000)
        } else if v != 0 && v % 1_000 == 0 {
            write!(f, "{}us", v / 1_000)
        } else {
            write!(f, "{v}ns")
        }
    }
}

impl Serialize for Nanos {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The one "string or integer" visitor of durations, shared by [`Nanos`] and the
/// per-page-type latency lists of [`crate::PerPageType`], so every malformed duration gets
/// the same message (with the key added by the config layer). Hand-written rather than
/// `serde_with::PickFirst<(_, DisplayFromStr)>` because that reports only "no variant
/// matched", which is the message this exists to replace.
pub(crate) struct NanosVisitor;

impl serde::de::Visitor<'_> for NanosVisitor {
    type Value = Nanos;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative duration like 78us (integer ns or a string with a unit)")
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Nanos, E> {
        Ok(Nanos(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Nanos, E> {
        u64::try_from(v)
            .map(Nanos)
            .map_err(|_| E::custom(format!("invalid duration {v}: {DURATION_EXPECTED}")))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Nanos, E> {
        Err(E::custom(format!(
            "invalid duration {v}: {DURATION_EXPECTED}; a bare number is integer ns, so write \"{v}us\" or similar"
        )))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Nanos, E> {
        Nanos::parse(v).map_err(E::custom)
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Nanos, E> {
        Err(E::custom(format!("invalid duration {v}: {DURATION_EXPECTED}")))
    }
}

impl<'de> Deserialize<'de> for Nanos {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Nanos, D::Error> {
        d.deserialize_any(NanosVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_exactly() {
        assert_eq!(Nanos::parse("70").unwrap(), Nanos(70));
        assert_eq!(Nanos::parse("70ns").unwrap(), Nanos(70));
        assert_eq!(Nanos::parse("78us").unwrap(), Nanos(78_000));
        assert_eq!(Nanos::parse("92.7µs").unwrap(), Nanos(92_700));
        assert_eq!(Nanos::parse("1.5ms").unwrap(), Nanos(1_500_000));
        assert_eq!(Nanos::parse("2s").unwrap(), Nanos(2_000_000_000));
        assert!(Nanos::parse("1.5ns").is_err());
        assert!(Nanos::parse("12 parsecs").is_err());
        assert!(Nanos::parse("").is_err());
        assert!(Nanos::parse("-5us").is_err());
    }

    #[test]
    fn display_round_trips() {
        for v in [0, 70, 78_000, 1_300_000, 15_000_000, 2_000_000_000, 92_700] {
            let n = Nanos(v);
            assert_eq!(Nanos::parse(&n.to_string()).unwrap(), n);
        }
    }

    #[test]
    fn scale_rounds_to_nearest() {
        assert_eq!(Nanos(78_000).scale_ppm(1_000_000), Nanos(78_000));
        assert_eq!(Nanos(90_000).scale_ppm(1_063_000), Nanos(95_670));
        assert_eq!(Nanos(3).scale_ppm(500_000), Nanos(2));
    }
}
