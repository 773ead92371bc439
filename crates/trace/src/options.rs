//! Trace options: the `[trace]` table of a run configuration. Every transform is an
//! explicit option, so the resolved table in a report says exactly what was replayed.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::TraceFormat;
use super::error::TraceError;
use super::num::parse_bytes;

/// The largest accepted reorder window (requests); bounds reader memory (~48 MiB).
pub const MAX_REORDER_WINDOW: u32 = 1 << 20;

/// How to read a trace. Embedded as the `[trace]` table of the run config.
///
/// Transforms are applied in this order: parse → device selection → fold →
/// sector alignment → capacity (wrap/reject) → reorder window → outliers → skip →
/// limit → rebase → time scale.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TraceOptions {
    /// Format override; `None` (absent) sniffs the first lines.
    pub format: Option<TraceFormat>,
    /// Column mapping for `format = "generic"` (required then, refused otherwise): a
    /// table, or the compact string `--generic` takes (so `--set trace.generic="…"` works).
    #[serde(deserialize_with = "generic_table_or_compact")]
    pub generic: Option<GenericMapping>,
    /// Subtract the first replayed request's timestamp from all (default true).
    pub rebase: bool,
    /// Multiply (rebased) timestamps by this exact rational: `"1/2"` or `0.5` replays
    /// twice as fast. Applied as `floor(t_ns * num / den)` in 128-bit integers.
    pub time_scale: TimeScale,
    /// Keep only these device ids (empty = all devices).
    pub devices: Vec<u32>,
    /// Fold all devices into one address space: device becomes 0 and the offset
    /// becomes `offset + device * fold_stride_bytes` (stride 0 overlays them, as SSDsim does).
    pub fold_devices: bool,
    /// Address stride between folded devices in bytes (0 = overlay).
    pub fold_stride_bytes: u64,
    /// What to do with requests beyond the simulated logical capacity.
    pub beyond_capacity: CapacityPolicy,
    /// Drop this many requests (after reordering) before replaying.
    pub skip: u64,
    /// Replay at most this many requests (after `skip`); `None` = all.
    pub limit: Option<u64>,
    /// Align every request outward to multiples of this many bytes (0 = off; 512 aligns to sectors).
    pub align_bytes: u32,
    /// Requests held to re-order a not-strictly-time-ordered trace (0 = must be sorted).
    pub reorder_window: u32,
    /// Malformed lines: `fail` (default) stops at the first; `skip` counts and skips them.
    pub on_error: OnError,
    /// With `on_error = "skip"`, fail once more than this many lines were skipped.
    pub max_errors: u64,
    /// blkparse: which event is a request (`auto`: `Q` if the first 256 KiB hold one, else `D`).
    pub blkparse_event: BlkparseEvent,
    /// Arrival gaps absurd for the trace's own distribution (see `docs/traces.md`):
    /// `warn` (default), `cut` (drop the requests on the bogus side, decided by looking
    /// ahead) or `clamp` (replace the gap by the typical gap).
    pub outliers: OutlierPolicy,
    /// Accept a trace that yields no request (default false: zero requests is an error
    /// naming why — empty file, header only, every line skipped or filtered).
    pub allow_empty: bool,
}

impl Default for TraceOptions {
    fn default() -> TraceOptions {
        TraceOptions {
            format: None,
            generic: None,
            rebase: true,
            time_scale: TimeScale::ONE,
            devices: Vec::new(),
            fold_devices: false,
            fold_stride_bytes: 0,
            beyond_capacity: CapacityPolicy::Wrap,
            skip: 0,
            limit: None,
            align_bytes: 0,
            reorder_window: 4096,
            on_error: OnError::Fail,
            max_errors: 1000,
            blkparse_event: BlkparseEvent::Auto,
            outliers: OutlierPolicy::Warn,
            allow_empty: false,
        }
    }
}

impl TraceOptions {
    /// Check the options for consistency.
    pub fn validate(&self) -> Result<(), TraceError> {
        let bad = |key, message: String| Err(TraceError::Options { key, message });
        if self.time_scale.num == 0 || self.time_scale.den == 0 {
            return bad("time_scale", "must be a positive number".into());
        }
        match (self.format, &self.generic) {
            (Some(TraceFormat::Generic), None) => {
                return bad(
                    "generic",
                    "format = \"generic\" needs a column mapping (--generic SPEC, or `trace.generic`)".into(),
                );
            }
            (f, Some(_)) if f != Some(TraceFormat::Generic) => {
                return bad("generic", "a column mapping is only used with format = \"generic\"".into());
            }
            _ => {}
        }
        if let Some(g) = &self.generic {
            g.validate()?;
        }
        if self.reorder_window > MAX_REORDER_WINDOW {
            return bad("reorder_window", format!("at most {MAX_REORDER_WINDOW} requests (memory bound)"));
        }
        if self.fold_stride_bytes != 0 && !self.fold_devices {
            return bad("fold_stride_bytes", "only meaningful with fold_devices = true".into());
        }
        if self.limit == Some(0) {
            return bad("limit", "a limit of 0 requests replays nothing; omit it for no limit".into());
        }
        Ok(())
    }
}

/// Requests beyond the logical capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CapacityPolicy {
    /// `offset mod capacity` (as SSDsim does); a request that would then cross the end
    /// is moved back to end exactly at the capacity.
    Wrap,
    /// A request beyond the capacity is a line error (`beyond-capacity`).
    Reject,
}

/// What to do with an absurd arrival gap (`trace.outliers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutlierPolicy {
    /// Replay as is; the report warns with the lines.
    Warn,
    /// Drop the requests on the bogus side of the absurd gap.
    Cut,
    /// Keep the request; replace the gap by the typical (median) gap.
    Clamp,
}

impl FromStr for OutlierPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "warn" => Ok(OutlierPolicy::Warn),
            "cut" => Ok(OutlierPolicy::Cut),
            "clamp" => Ok(OutlierPolicy::Clamp),
            _ => Err(format!("{s:?}: expected warn, cut or clamp")),
        }
    }
}

impl fmt::Display for OutlierPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutlierPolicy::Warn => "warn",
            OutlierPolicy::Cut => "cut",
            OutlierPolicy::Clamp => "clamp",
        })
    }
}

/// Handling of malformed lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    /// Stop at the first bad line with its error.
    Fail,
    /// Skip bad lines, count them by reason (reported), fail after `max_errors`.
    Skip,
}

/// Which blkparse event marks a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlkparseEvent {
    /// `Q` if the first 256 KiB of the trace contain a `Q` event, otherwise `D`.
    Auto,
    /// `Q` (queued) events.
    Q,
    /// `D` (issued to the driver) events.
    D,
}

impl FromStr for CapacityPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "wrap" => Ok(CapacityPolicy::Wrap),
            "reject" => Ok(CapacityPolicy::Reject),
            _ => Err(format!("{s:?}: expected wrap or reject")),
        }
    }
}

impl FromStr for OnError {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "fail" => Ok(OnError::Fail),
            "skip" => Ok(OnError::Skip),
            _ => Err(format!("{s:?}: expected fail or skip")),
        }
    }
}

impl FromStr for BlkparseEvent {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(BlkparseEvent::Auto),
            "q" | "Q" => Ok(BlkparseEvent::Q),
            "d" | "D" => Ok(BlkparseEvent::D),
            _ => Err(format!("{s:?}: expected auto, q or d")),
        }
    }
}

/// An exact positive rational time-scale factor `num/den` (reduced).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeScale {
    /// Numerator.
    pub num: u64,
    /// Denominator.
    pub den: u64,
}

impl TimeScale {
    /// The identity.
    pub const ONE: TimeScale = TimeScale { num: 1, den: 1 };

    /// A reduced rational; `None` if either part is zero.
    pub fn new(num: u64, den: u64) -> Option<TimeScale> {
        if num == 0 || den == 0 {
            return None;
        }
        let g = gcd(num, den);
        Some(TimeScale { num: num / g, den: den / g })
    }

    /// `floor(ns * num / den)`, or `None` if it does not fit in 64 bits.
    #[inline]
    pub fn apply(self, ns: u64) -> Option<u64> {
        if self.num == 1 && self.den == 1 {
            return Some(ns);
        }
        u64::try_from(ns as u128 * self.num as u128 / self.den as u128).ok()
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Default for TimeScale {
    fn default() -> TimeScale {
        TimeScale::ONE
    }
}

impl FromStr for TimeScale {
    type Err = String;
    /// `"2"`, `"0.5"`, `"1/3"`, `"2.5/7"`, `"1e3"`, `"2.5e-3"` — exact (see `exact_ratio`).
    fn from_str(s: &str) -> Result<TimeScale, String> {
        let shown = s.trim();
        match exact_ratio(shown) {
            Ok((num, den)) => Ok(TimeScale { num, den }),
            Err(RatioError::NotPositive) => Err(format!(
                "time scale {shown:?}: expected a positive number or fraction like 0.5, 1/3 or 2.5e-3"
            )),
            Err(RatioError::TooLarge) => Err(format!(
                "time scale {shown:?} is too large: above {max} (about 1.8e19) every arrival 1 ns or more \
                 after the first lies beyond the 64-bit nanosecond clock (about 584 years); use a smaller \
                 factor (2 replays twice as slow, 0.5 twice as fast)",
                max = u64::MAX
            )),
            Err(RatioError::TooSmall) => Err(format!(
                "time scale {shown:?} is too small: below 1/{max} (about 5.4e-20) every arrival within 584 \
                 years of the first becomes 0; use a larger factor (0.001 replays 1000 times as fast)",
                max = u64::MAX
            )),
            Err(RatioError::TooPrecise) => Err(format!(
                "time scale {shown:?} is too precise: as an exact fraction its numerator or denominator \
                 exceeds 2^64 - 1; round it to fewer digits"
            )),
        }
    }
}

/// Why a number is not an exact positive ratio of two `u64`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RatioError {
    /// Not a number, or not positive.
    NotPositive,
    /// Above `u64::MAX`.
    TooLarge,
    /// Below `1 / u64::MAX`.
    TooSmall,
    /// In range, but its reduced fraction needs more than 64 bits on a side.
    TooPrecise,
}

/// A positive decimal (`"12.25"`, `"2.5e-3"`, `".5E+2"`) or a fraction of two
/// (`"1/3"`, `"1e3/7"`) as an exact reduced `num/den`, both parts `u64`. Shared by
/// `trace.time_scale` and the generator's `--rate`.
pub(crate) fn exact_ratio(s: &str) -> Result<(u64, u64), RatioError> {
    let (a, b) = match s.trim().split_once('/') {
        Some((a, b)) => (a.trim(), b.trim()),
        None => (s.trim(), "1"),
    };
    let (a, b) =
        (scientific(a).ok_or(RatioError::NotPositive)?, scientific(b).ok_or(RatioError::NotPositive)?);
    if a.digits == 0 || b.digits == 0 {
        return Err(RatioError::NotPositive);
    }
    // value = (a.digits / b.digits) × 10^e, exactly in u128 where it fits.
    let e = a.exp - b.exp;
    let pow = u32::try_from(e.unsigned_abs()).ok().and_then(|k| 10u128.checked_pow(k));
    let exact = match pow {
        Some(p) if e >= 0 => a.digits.checked_mul(p).map(|n| (n, b.digits)),
        Some(p) => b.digits.checked_mul(p).map(|d| (a.digits, d)),
        None => None,
    };
    let Some((num, den)) = exact.filter(|_| a.whole && b.whole) else {
        // Too many digits for u128: the magnitude (the power of ten of the leading
        // digit, within one) decides what to call it.
        let magnitude = a.leading_exp() - b.leading_exp();
        return Err(match magnitude {
            m if m > 20 => RatioError::TooLarge,
            m if m < -20 => RatioError::TooSmall,
            _ => RatioError::TooPrecise,
        });
    };
    let g = gcd128(num, den);
    let (num, den) = (num / g, den / g);
    if let (Ok(n), Ok(d)) = (u64::try_from(num), u64::try_from(den)) {
        return Ok((n, d));
    }
    let max = u64::MAX as u128;
    if max.checked_mul(den).is_some_and(|m| num > m) {
        Err(RatioError::TooLarge)
    } else if num.checked_mul(max).is_some_and(|m| m < den) {
        Err(RatioError::TooSmall)
    } else {
        Err(RatioError::TooPrecise)
    }
}

/// A non-negative decimal as written: `digits × 10^exp`, with its significant digits
/// (at most 38, the most `u128` holds; `whole` is false when more were dropped).
struct Scientific {
    digits: u128,
    exp: i64,
    /// Significant digits kept.
    len: i64,
    /// Whether `digits` holds every significant digit.
    whole: bool,
}

impl Scientific {
    /// The power of ten of the leading digit.
    fn leading_exp(&self) -> i64 {
        self.exp + self.len - 1
    }
}

/// `"12.25"` → 1225 × 10^-2; `"2.5e-3"` → 25 × 10^-4; `None` if it is not a plain
/// non-negative decimal with an optional exponent.
fn scientific(s: &str) -> Option<Scientific> {
    let (mantissa, exp) = match s.split_once(['e', 'E']) {
        Some((m, e)) => {
            let (neg, digits) = match e.as_bytes().first()? {
                b'-' => (true, &e[1..]),
                b'+' => (false, &e[1..]),
                _ => (false, e),
            };
            if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            // Beyond 10^±10^9 the value is out of range whatever its digits.
            let v: i64 = digits.parse().unwrap_or(i64::MAX).min(1_000_000_000);
            (m, if neg { -v } else { v })
        }
        None => (s, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if (int.is_empty() && frac.is_empty()) || !int.bytes().chain(frac.bytes()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let all = int.bytes().chain(frac.bytes());
    let lead = all.clone().take_while(|&c| c == b'0').count();
    let sig: Vec<u8> = all.skip(lead).collect();
    let trail = sig.iter().rev().take_while(|&&c| c == b'0').count();
    let sig = &sig[..sig.len() - trail];
    let mut exp = exp - frac.len() as i64 + trail as i64;
    let kept = sig.len().min(38);
    // Digits dropped beyond 38 only move the exponent (they make the value inexact).
    exp += (sig.len() - kept) as i64;
    let digits = sig[..kept].iter().fold(0u128, |v, &c| v * 10 + (c - b'0') as u128);
    Some(Scientific { digits, exp, len: kept as i64, whole: kept == sig.len() })
}

fn gcd128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl fmt::Display for TimeScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 { write!(f, "{}", self.num) } else { write!(f, "{}/{}", self.num, self.den) }
    }
}

impl Serialize for TimeScale {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TimeScale {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TimeScale, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = TimeScale;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a positive number or a fraction string like \"1/2\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<TimeScale, E> {
                TimeScale::new(v, 1).ok_or_else(|| E::custom("time_scale must be positive"))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<TimeScale, E> {
                u64::try_from(v)
                    .ok()
                    .and_then(|v| TimeScale::new(v, 1))
                    .ok_or_else(|| E::custom("time_scale must be positive"))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<TimeScale, E> {
                // The shortest decimal that round-trips the float, then exact from there;
                // in scientific notation when far from 1, so that an error quotes `1e300`
                // as written rather than 301 digits (new-user trial).
                if !(v.is_finite() && v > 0.0) {
                    return Err(E::custom("time_scale must be a positive finite number"));
                }
                let shortest = if (1e-6..1e15).contains(&v) { format!("{v}") } else { format!("{v:e}") };
                shortest.parse().map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TimeScale, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// `[trace] generic` as a table or as the compact string form (`"delim=comma time=1:s …"`).
fn generic_table_or_compact<'de, D: Deserializer<'de>>(d: D) -> Result<Option<GenericMapping>, D::Error> {
    struct V;
    impl<'de> serde::de::Visitor<'de> for V {
        type Value = Option<GenericMapping>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a column-mapping table or a string like \"time=1:s op=2:R/W offset=3 size=4\"")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
            v.parse().map(Some).map_err(E::custom)
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            GenericMapping::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(V)
        }
    }
    d.deserialize_any(V)
}

/// Column mapping for the `generic` format (1-based columns, like `cut` and `awk`).
///
/// Compact form (`--generic`): `"delim=comma skip=1 time=1:s op=3:R/W offset=5:byte size=6:byte device=4"`;
/// the op spec lists read, write and optionally trim codes separated by `/`,
/// aliases by `|` (`op=4:r|read/w|write/d`), matched case-insensitively.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenericMapping {
    /// Field separator.
    #[serde(default)]
    pub delimiter: Delimiter,
    /// Lines to skip at the top (headers).
    #[serde(default)]
    pub skip_lines: u64,
    /// Timestamp column and unit.
    pub time: TimeColumn,
    /// Operation column and codes.
    pub op: OpColumn,
    /// Offset column and unit.
    pub offset: ByteColumn,
    /// Size column and unit.
    pub size: ByteColumn,
    /// Optional device column (device 0 when absent).
    #[serde(default)]
    pub device: Option<u32>,
}

/// The timestamp column of a generic trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeColumn {
    /// 1-based column.
    pub column: u32,
    /// Unit of the (decimal) value.
    pub unit: TimeUnit,
}

/// Time units of a generic timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
    /// Windows filetime: integer 100 ns ticks.
    Filetime,
}

/// The op column of a generic trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpColumn {
    /// 1-based column.
    pub column: u32,
    /// Codes meaning read (case-insensitive).
    pub read: Vec<String>,
    /// Codes meaning write.
    pub write: Vec<String>,
    /// Codes meaning trim/discard.
    #[serde(default)]
    pub trim: Vec<String>,
}

/// An offset or size column of a generic trace.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ByteColumn {
    /// 1-based column.
    pub column: u32,
    /// Bytes per unit of the (integer) value: `"byte"` = 1, `"sector"` = 512, `"4k"` = 4096, or a number.
    pub unit: ByteUnit,
}

/// Bytes per unit of an integer field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ByteUnit(pub u32);

impl FromStr for ByteUnit {
    type Err = String;
    fn from_str(s: &str) -> Result<ByteUnit, String> {
        match s {
            "byte" | "bytes" | "b" | "B" => Ok(ByteUnit(1)),
            "sector" | "sectors" => Ok(ByteUnit(512)),
            _ => {
                let v = parse_bytes(s)?;
                match u32::try_from(v) {
                    Ok(v) if v > 0 => Ok(ByteUnit(v)),
                    _ => Err(format!("unit {s:?} must be between 1 byte and 4 GiB")),
                }
            }
        }
    }
}

impl Serialize for ByteUnit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteUnit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<ByteUnit, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = ByteUnit;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes per unit: a positive integer or \"byte\", \"sector\", \"4k\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ByteUnit, E> {
                u32::try_from(v)
                    .ok()
                    .filter(|&v| v > 0)
                    .map(ByteUnit)
                    .ok_or_else(|| E::custom("unit out of range"))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ByteUnit, E> {
                u32::try_from(v)
                    .ok()
                    .filter(|&v| v > 0)
                    .map(ByteUnit)
                    .ok_or_else(|| E::custom("unit out of range"))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ByteUnit, E> {
                v.parse().map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Field separator of a generic trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Delimiter {
    /// Runs of spaces and tabs.
    #[default]
    Whitespace,
    /// One ASCII character (`,`, `;`, `\t`, `|`, …); spaces around fields are trimmed.
    Char(u8),
}

impl FromStr for Delimiter {
    type Err = String;
    fn from_str(s: &str) -> Result<Delimiter, String> {
        match s {
            "whitespace" | "space" | "ws" => Ok(Delimiter::Whitespace),
            "comma" => Ok(Delimiter::Char(b',')),
            "tab" | "\t" => Ok(Delimiter::Char(b'\t')),
            "semicolon" => Ok(Delimiter::Char(b';')),
            "pipe" => Ok(Delimiter::Char(b'|')),
            _ if s.len() == 1 && s.is_ascii() && s != " " => Ok(Delimiter::Char(s.as_bytes()[0])),
            _ => Err(format!(
                "delimiter {s:?}: expected whitespace, comma, tab, semicolon, pipe or one character"
            )),
        }
    }
}

impl fmt::Display for Delimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Delimiter::Whitespace => f.write_str("whitespace"),
            Delimiter::Char(b',') => f.write_str("comma"),
            Delimiter::Char(b'\t') => f.write_str("tab"),
            Delimiter::Char(b';') => f.write_str("semicolon"),
            Delimiter::Char(b'|') => f.write_str("pipe"),
            Delimiter::Char(c) => write!(f, "{}", *c as char),
        }
    }
}

impl Serialize for Delimiter {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Delimiter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Delimiter, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

impl GenericMapping {
    /// Check columns and op codes.
    pub fn validate(&self) -> Result<(), TraceError> {
        let bad = |message: String| Err(TraceError::Options { key: "generic", message });
        let mut cols = vec![self.time.column, self.op.column, self.offset.column, self.size.column];
        cols.extend(self.device);
        if cols.contains(&0) {
            return bad("columns are 1-based (the first column is 1)".into());
        }
        if cols.iter().any(|&c| c > 64) {
            return bad("columns beyond 64 are not supported".into());
        }
        let mut sorted = cols.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != cols.len() {
            return bad("two fields map to the same column".into());
        }
        if self.op.read.is_empty() && self.op.write.is_empty() {
            return bad("the op mapping needs read and/or write codes".into());
        }
        let all: Vec<String> = self
            .op
            .read
            .iter()
            .chain(&self.op.write)
            .chain(&self.op.trim)
            .map(|c| c.to_ascii_lowercase())
            .collect();
        let mut dedup = all.clone();
        dedup.sort();
        dedup.dedup();
        if dedup.len() != all.len() || all.iter().any(|c| c.is_empty()) {
            return bad("op codes must be non-empty and distinct".into());
        }
        Ok(())
    }
}

impl FromStr for GenericMapping {
    type Err = String;
    fn from_str(spec: &str) -> Result<GenericMapping, String> {
        let mut delimiter = Delimiter::Whitespace;
        let mut skip_lines = 0;
        let (mut time, mut op, mut offset, mut size, mut device) = (None, None, None, None, None);
        let col = |v: &str| v.parse::<u32>().map_err(|_| format!("{v:?} is not a column number"));
        for tok in spec.split_whitespace() {
            let (k, v) = tok.split_once('=').ok_or_else(|| format!("{tok:?}: expected key=value"))?;
            match k {
                "delim" | "delimiter" | "sep" => delimiter = v.parse()?,
                "skip" => skip_lines = v.parse().map_err(|_| format!("skip={v:?}: not a number"))?,
                "device" => device = Some(col(v)?),
                "time" => {
                    let (c, u) = v.split_once(':').ok_or("time=COL:UNIT (ns|us|ms|s|filetime)")?;
                    let unit = match u {
                        "ns" => TimeUnit::Ns,
                        "us" => TimeUnit::Us,
                        "ms" => TimeUnit::Ms,
                        "s" => TimeUnit::S,
                        "filetime" => TimeUnit::Filetime,
                        _ => return Err(format!("time unit {u:?}: expected ns, us, ms, s or filetime")),
                    };
                    time = Some(TimeColumn { column: col(c)?, unit });
                }
                "op" => {
                    let (c, codes) = v.split_once(':').ok_or("op=COL:READ/WRITE[/TRIM]")?;
                    let parts: Vec<&str> = codes.split('/').collect();
                    if parts.len() < 2 || parts.len() > 3 {
                        return Err(format!("op codes {codes:?}: expected READ/WRITE or READ/WRITE/TRIM"));
                    }
                    let list = |p: &str| p.split('|').filter(|s| !s.is_empty()).map(str::to_owned).collect();
                    op = Some(OpColumn {
                        column: col(c)?,
                        read: list(parts[0]),
                        write: list(parts[1]),
                        trim: parts.get(2).map(|p| list(p)).unwrap_or_default(),
                    });
                }
                "offset" | "size" => {
                    let (c, u) = v.split_once(':').unwrap_or((v, "byte"));
                    let bc = ByteColumn { column: col(c)?, unit: u.parse()? };
                    if k == "offset" { offset = Some(bc) } else { size = Some(bc) }
                }
                _ => return Err(format!("unknown key {k:?} (delim, skip, time, op, offset, size, device)")),
            }
        }
        let m = GenericMapping {
            delimiter,
            skip_lines,
            time: time.ok_or("missing time=COL:UNIT")?,
            op: op.ok_or("missing op=COL:READ/WRITE")?,
            offset: offset.ok_or("missing offset=COL:UNIT")?,
            size: size.ok_or("missing size=COL:UNIT")?,
            device,
        };
        m.validate().map_err(|e| e.to_string())?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_scale_is_exact() {
        let h: TimeScale = "0.5".parse().unwrap();
        assert_eq!(h, TimeScale { num: 1, den: 2 });
        assert_eq!("2/4".parse::<TimeScale>().unwrap(), h);
        assert_eq!("1/3".parse::<TimeScale>().unwrap().apply(10), Some(3));
        assert_eq!("2.5".parse::<TimeScale>().unwrap().to_string(), "5/2");
        assert!("0".parse::<TimeScale>().is_err());
        assert!("-1".parse::<TimeScale>().is_err());
        assert!("x".parse::<TimeScale>().is_err());
        assert_eq!(TimeScale { num: 3, den: 1 }.apply(u64::MAX), None);
    }

    /// Regression (new-user trial): `trace.time_scale = 1e300` was refused with the
    /// float's 301 decimal digits and "expected a positive number" (it is one). Now
    /// scientific notation is read exactly, and a factor out of range says which way,
    /// quoting the value as written, with the bound and a remedy.
    #[test]
    fn time_scale_in_scientific_notation_and_out_of_range() {
        assert_eq!("2.5e-3".parse::<TimeScale>().unwrap(), TimeScale { num: 1, den: 400 });
        assert_eq!("1E+3/3".parse::<TimeScale>().unwrap(), TimeScale { num: 1000, den: 3 });
        assert_eq!(" .5e1 ".parse::<TimeScale>().unwrap(), TimeScale { num: 5, den: 1 });
        let max = u64::MAX.to_string();
        assert_eq!(max.parse::<TimeScale>().unwrap(), TimeScale { num: u64::MAX, den: 1 });
        assert_eq!(format!("1/{max}").parse::<TimeScale>().unwrap(), TimeScale { num: 1, den: u64::MAX });
        for (text, says) in [
            ("1e300", "time scale \"1e300\" is too large: above 18446744073709551615 (about 1.8e19)"),
            ("18446744073709551616", "is too large"),
            ("1e99999999999999999999", "is too large"),
            ("1e-30", "time scale \"1e-30\" is too small: below 1/18446744073709551615"),
            ("1/1e300", "is too small"),
            ("1.00000000000000000000000000000000000000001", "is too precise"),
            ("1e", "expected a positive number or fraction like 0.5, 1/3 or 2.5e-3"),
            ("0e5", "expected a positive number"),
        ] {
            let e = text.parse::<TimeScale>().unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
            assert!(e.len() < 400, "{text}: {e}");
        }
        for (toml, says) in [
            ("time_scale = 1e300", "time scale \"1e300\" is too large"),
            ("time_scale = 1e-300", "time scale \"1e-300\" is too small"),
        ] {
            let e = toml::from_str::<TraceOptions>(toml).unwrap_err().to_string();
            assert!(e.contains(says) && !e.contains("0000000000000000000000"), "{toml}: {e}");
        }
        // A float is still the exact decimal it reads as.
        let o: TraceOptions = toml::from_str("time_scale = 2.5e-3").unwrap();
        assert_eq!(o.time_scale, TimeScale { num: 1, den: 400 });
        let o: TraceOptions = toml::from_str("time_scale = 1e18").unwrap();
        assert_eq!(o.time_scale, TimeScale { num: 1_000_000_000_000_000_000, den: 1 });
    }

    #[test]
    fn options_round_trip_through_toml_and_reject_unknown_keys() {
        let text = r#"
            format = "msr"
            rebase = false
            time_scale = 0.25
            devices = [0, 2]
            beyond_capacity = "reject"
            limit = 100
            on_error = "skip"
            max_errors = 5
        "#;
        let o: TraceOptions = toml::from_str(text).unwrap();
        assert_eq!(o.format, Some(TraceFormat::Msr));
        assert_eq!(o.time_scale, TimeScale { num: 1, den: 4 });
        assert_eq!(o.reorder_window, 4096);
        o.validate().unwrap();
        let back: TraceOptions = toml::from_str(&toml::to_string(&o).unwrap()).unwrap();
        assert_eq!(back, o);
        assert!(toml::from_str::<TraceOptions>("rebsae = true").is_err());
    }

    #[test]
    fn generic_mapping_compact_and_toml_agree() {
        let m: GenericMapping =
            "delim=comma skip=1 time=1:s op=3:R|read/W offset=5:sector size=6 device=4".parse().unwrap();
        assert_eq!(m.delimiter, Delimiter::Char(b','));
        assert_eq!(m.offset.unit, ByteUnit(512));
        assert_eq!(m.size.unit, ByteUnit(1));
        assert_eq!(m.op.read, vec!["R".to_owned(), "read".to_owned()]);
        let t = toml::to_string(&m).unwrap();
        let back: GenericMapping = toml::from_str(&t).unwrap();
        assert_eq!(back, m);
        assert!("time=0:s op=1:r/w offset=2 size=3".parse::<GenericMapping>().is_err());
        assert!("time=1:s op=1:r/w offset=2 size=3".parse::<GenericMapping>().is_err());
        assert!("time=1:s op=2:r/r offset=3 size=4".parse::<GenericMapping>().is_err());
    }

    /// `--set trace.generic="…"` used to fail: the field only took a table.
    #[test]
    fn generic_mapping_is_accepted_as_a_compact_string() {
        let o: TraceOptions =
            toml::from_str("format = \"generic\"\ngeneric = \"time=1:s op=2:R/W offset=3 size=4\"").unwrap();
        let table: TraceOptions = toml::from_str(&toml::to_string(&o).unwrap()).unwrap();
        assert_eq!(o, table);
        assert_eq!(o.generic.as_ref().unwrap().op.read, vec!["R".to_owned()]);
        let e =
            toml::from_str::<TraceOptions>("generic = \"time=0:s op=2:R/W offset=3 size=4\"").unwrap_err();
        assert!(e.to_string().contains("1-based"), "{e}");
    }

    #[test]
    fn validation_catches_inconsistent_options() {
        let o = TraceOptions { format: Some(TraceFormat::Generic), ..TraceOptions::default() };
        assert!(o.validate().is_err());
        let o = TraceOptions { fold_stride_bytes: 4096, ..TraceOptions::default() };
        assert!(o.validate().is_err());
        let o = TraceOptions { reorder_window: MAX_REORDER_WINDOW + 1, ..TraceOptions::default() };
        assert!(o.validate().is_err());
    }
}
