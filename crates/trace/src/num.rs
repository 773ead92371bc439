//! Hand-rolled, allocation-free number parsing for trace fields.
//!
//! All conversions are exact integer arithmetic: a decimal timestamp such as
//! `1456095145.133076000` seconds becomes nanoseconds by shifting the decimal point,
//! never through `f64`. Fraction digits beyond nanosecond resolution are truncated
//! (towards zero), which is documented in `docs/traces.md`.

use super::error::Problem;

/// Parse an unsigned decimal integer (optional leading `+`).
#[inline]
pub(crate) fn parse_u64(f: &[u8]) -> Result<u64, Problem> {
    let digits = match f.first() {
        Some(b'+') => &f[1..],
        Some(b'-') => return Err(negative_or_nan(&f[1..])),
        _ => f,
    };
    if digits.is_empty() {
        return Err(Problem::NotANumber);
    }
    if digits.len() <= 19 {
        let mut v: u64 = 0;
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return Err(Problem::NotANumber);
            }
            v = v * 10 + d as u64;
        }
        Ok(v)
    } else {
        let mut v: u64 = 0;
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return Err(Problem::NotANumber);
            }
            v = v.checked_mul(10).and_then(|v| v.checked_add(d as u64)).ok_or(Problem::Overflow)?;
        }
        Ok(v)
    }
}

/// Parse an unsigned integer that must fit in `u32`.
#[inline]
pub(crate) fn parse_u32(f: &[u8]) -> Result<u32, Problem> {
    let v = parse_u64(f)?;
    u32::try_from(v).map_err(|_| Problem::Overflow)
}

/// Parse a non-negative decimal number (`12`, `12.5`, `.5`, `12.`) and return it
/// multiplied by `10^frac_digits`, truncating further fraction digits. With
/// `frac_digits = 9` a value in seconds becomes nanoseconds.
#[inline]
pub(crate) fn parse_decimal(f: &[u8], frac_digits: u32) -> Result<u64, Problem> {
    let body = match f.first() {
        Some(b'+') => &f[1..],
        Some(b'-') => return Err(negative_or_nan(&f[1..])),
        _ => f,
    };
    let (int_part, frac_part) = match memchr::memchr(b'.', body) {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, &body[body.len()..]),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(Problem::NotANumber);
    }
    let int = if int_part.is_empty() { 0 } else { parse_digits(int_part)? };
    let mut frac: u64 = 0;
    let mut used = 0u32;
    for &b in frac_part {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return Err(Problem::NotANumber);
        }
        if used < frac_digits {
            frac = frac * 10 + d as u64;
            used += 1;
        }
    }
    let pad = 10u64.pow(frac_digits - used);
    let scale = 10u64.pow(frac_digits);
    int.checked_mul(scale).and_then(|v| v.checked_add(frac * pad)).ok_or(Problem::Overflow)
}

#[inline]
fn parse_digits(d: &[u8]) -> Result<u64, Problem> {
    let mut v: u64 = 0;
    for &b in d {
        let x = b.wrapping_sub(b'0');
        if x > 9 {
            return Err(Problem::NotANumber);
        }
        v = v.checked_mul(10).and_then(|v| v.checked_add(x as u64)).ok_or(Problem::Overflow)?;
    }
    Ok(v)
}

/// After a leading `-`: a number means "negative", anything else "not a number".
fn negative_or_nan(rest: &[u8]) -> Problem {
    let numeric = !rest.is_empty()
        && rest.iter().all(|b| b.is_ascii_digit() || *b == b'.')
        && rest.iter().any(u8::is_ascii_digit);
    if numeric { Problem::Negative } else { Problem::NotANumber }
}

/// Parse a byte count with an optional unit. SI units are decimal and IEC units binary,
/// as their standards say: `kB`/`KB` = 10^3, `MB` = 10^6, `GB` = 10^9, `TB` = 10^12;
/// `KiB` = 2^10, `MiB` = 2^20, `GiB` = 2^30, `TiB` = 2^40. A bare single letter
/// (`4k`, `1M`, `2G`, `1T`, any case) is binary, the storage convention (`4k` blocks);
/// `B` or no unit is bytes. A space before the unit is allowed (`64 KiB`).
pub fn parse_bytes(text: &str) -> Result<u64, String> {
    let s = text.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 =
        num.parse().map_err(|_| format!("{text:?} is not a byte count (e.g. 4096, 4k, 64KiB, 200GB)"))?;
    let mult: u64 = match unit.trim() {
        "" | "B" | "b" => 1,
        "k" | "K" | "KiB" | "kiB" => 1 << 10,
        "m" | "M" | "MiB" => 1 << 20,
        "g" | "G" | "GiB" => 1 << 30,
        "t" | "T" | "TiB" => 1 << 40,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => {
            return Err(format!(
                "{text:?}: unknown unit {unit:?} (B; KiB, MiB, GiB, TiB = powers of 1024; kB, MB, GB, TB = powers \
                 of 1000; bare k, M, G, T = powers of 1024)"
            ));
        }
    };
    n.checked_mul(mult).ok_or_else(|| format!("{text:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_u64(b"0"), Ok(0));
        assert_eq!(parse_u64(b"+42"), Ok(42));
        assert_eq!(parse_u64(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), Err(Problem::Overflow));
        assert_eq!(parse_u64(b"-5"), Err(Problem::Negative));
        assert_eq!(parse_u64(b"-x"), Err(Problem::NotANumber));
        assert_eq!(parse_u64(b"12a"), Err(Problem::NotANumber));
        assert_eq!(parse_u64(b""), Err(Problem::NotANumber));
        assert_eq!(parse_u64(b"1.5"), Err(Problem::NotANumber));
        assert_eq!(parse_u32(b"4294967296"), Err(Problem::Overflow));
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_decimal(b"1456095145.133076000", 9), Ok(1_456_095_145_133_076_000));
        assert_eq!(parse_decimal(b"0.000001850", 9), Ok(1_850));
        assert_eq!(parse_decimal(b"223.412", 6), Ok(223_412_000));
        assert_eq!(parse_decimal(b".5", 9), Ok(500_000_000));
        assert_eq!(parse_decimal(b"7.", 3), Ok(7_000));
        assert_eq!(parse_decimal(b"12", 0), Ok(12));
        // Beyond ns resolution: truncated, never rounded.
        assert_eq!(parse_decimal(b"0.1234567899", 9), Ok(123_456_789));
        assert_eq!(parse_decimal(b"-0.5", 9), Err(Problem::Negative));
        assert_eq!(parse_decimal(b".", 9), Err(Problem::NotANumber));
        assert_eq!(parse_decimal(b"1e9", 9), Err(Problem::NotANumber));
        assert_eq!(parse_decimal(b"1.2.3", 9), Err(Problem::NotANumber));
        assert_eq!(parse_decimal(b"99999999999999999999", 0), Err(Problem::Overflow));
        assert_eq!(parse_decimal(b"99999999999", 9), Err(Problem::Overflow));
    }

    #[test]
    fn byte_units() {
        assert_eq!(parse_bytes("4096"), Ok(4096));
        assert_eq!(parse_bytes("4k"), Ok(4096));
        assert_eq!(parse_bytes("64KiB"), Ok(65536));
        assert_eq!(parse_bytes("200GiB"), Ok(200 << 30));
        // Regression (issue #8 item 20): GB used to be binary.
        assert_eq!(parse_bytes("200GB"), Ok(200_000_000_000));
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert_eq!(parse_bytes("64KB"), Ok(64_000));
        assert_eq!(parse_bytes("64kB"), Ok(64_000));
        assert_eq!(parse_bytes("3 MiB"), Ok(3 << 20));
        assert_eq!(parse_bytes("1MB"), Ok(1_000_000));
        assert_eq!(parse_bytes("1TB"), Ok(1_000_000_000_000));
        assert_eq!(parse_bytes("1T"), Ok(1 << 40));
        assert!(parse_bytes("4 parsecs").is_err());
        assert!(parse_bytes("-4k").is_err());
    }
}
