//! Decimal digits eight bytes at a time (SWAR: SIMD within a register), for the
//! whole-line fast path of the five-column ASCII formats (`formats::ssdsim`).
//!
//! A field is read as 64-bit little-endian words (`u64::from_le_bytes`, no unsafe
//! code): bit tricks find the first byte that is not a digit, and three
//! multiply-shift steps turn up to eight digits into their value (the technique of
//! simdjson's `parse_eight_digits_unrolled`). A byte-at-a-time loop costs a compare and
//! a branch per digit, and its trip count varies per line, so its exit mispredicts;
//! here a field of up to 16 digits costs two loads and a fixed sequence of arithmetic.

/// A byte repeated in every lane.
const ONES: u64 = 0x0101_0101_0101_0101;
/// The top bit of every lane.
const HIGH: u64 = ONES * 0x80;
/// `10^n` for the digit counts of one word.
const POW10: [u64; 9] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];
/// The most digits a field may have (`u64` holds every 19-digit number).
pub(crate) const MAX_DIGITS: usize = 19;

/// The eight bytes of `b` at `i` as a little-endian word (byte `i` lowest), if `b`
/// holds them.
#[inline(always)]
fn load8(b: &[u8], i: usize) -> Option<u64> {
    let s: [u8; 8] = b.get(i..i.checked_add(8)?)?.try_into().ok()?;
    Some(u64::from_le_bytes(s))
}

/// A word's lanes mapped to digit values: exactly the bytes `'0'..='9'` become 0..=9.
#[inline(always)]
fn lanes(w: u64) -> u64 {
    w ^ (ONES * b'0' as u64)
}

/// How many lanes of `x` (from [`lanes`]) lead with a digit, times 8 (0 to 64).
#[inline(always)]
fn digit_bits(x: u64) -> u32 {
    // A lane is a digit iff it is below 10: adding 0x76 sets its top bit iff it is
    // 10..=0x7f, and a lane at 0x80 or above has it already. A carry out of a lane at
    // 0x8a or above only reaches the lanes after it, which lie beyond the first
    // non-digit and do not count.
    let non_digit = (x | x.wrapping_add(ONES * 0x76)) & HIGH;
    non_digit.trailing_zeros() & !7
}

/// The value of the first `bits / 8` digit lanes of `x` (`bits` from [`digit_bits`],
/// below 64; 0 for none).
#[inline(always)]
fn value(x: u64, bits: u32) -> u64 {
    // Move the digits to the top lanes: the lanes below become leading zeros and the
    // lanes after the digits fall off. In two shifts, so that no digits (a shift by 64)
    // leave nothing.
    eight_digits((x << 8) << (56 - bits))
}

/// The value of eight digit lanes (0..=9 each; byte 0 the most significant digit).
#[inline(always)]
fn eight_digits(v: u64) -> u64 {
    // Pairs: lane 2k becomes 10·d(2k) + d(2k+1) (odd lanes hold garbage, masked off).
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    // Lanes 0 and 4 (pairs 0 and 2) times 10^6 and 10^2, lanes 2 and 6 (pairs 1 and 3)
    // times 10^4 and 1, summed in the upper half of the product.
    let even = (v & 0x0000_00ff_0000_00ff).wrapping_mul(100 + (1_000_000 << 32));
    let odd = ((v >> 16) & 0x0000_00ff_0000_00ff).wrapping_mul(1 + (10_000 << 32));
    even.wrapping_add(odd) >> 32
}

/// The run of ASCII digits at `b[i..]`: its value and the index just after it. `None`
/// if there is no digit, more than [`MAX_DIGITS`], or `b` ends too soon for 8-byte
/// loads (8 bytes after each full word of digits read) — the caller then takes its
/// general path.
#[inline(always)]
pub(crate) fn digit_run(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let x = lanes(load8(b, i)?);
    let bits = digit_bits(x);
    if bits < 64 {
        // Up to 7 digits: one word (a column's digit count rarely crosses 8, so this
        // branch predicts well).
        return (bits > 0).then(|| (value(x, bits), i + (bits / 8) as usize));
    }
    let v = eight_digits(x);
    let x = lanes(load8(b, i + 8)?);
    let bits = digit_bits(x);
    if bits < 64 {
        return Some((v * POW10[(bits / 8) as usize] + value(x, bits), i + 8 + (bits / 8) as usize));
    }
    let v = v * POW10[8] + eight_digits(x);
    let x = lanes(load8(b, i + 16)?);
    let bits = digit_bits(x);
    let n = (bits / 8) as usize;
    if 16 + n > MAX_DIGITS {
        return None;
    }
    Some((v * POW10[n] + value(x, bits), i + 16 + n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: a byte loop.
    fn slow(b: &[u8], i: usize) -> Option<(u64, usize)> {
        let n = b[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 || n > MAX_DIGITS {
            return None;
        }
        let v = b[i..i + n].iter().fold(0u64, |v, &c| v * 10 + (c - b'0') as u64);
        Some((v, i + n))
    }

    #[test]
    fn every_digit_count_and_terminator() {
        for n in 1..=20usize {
            for end in [b' ', b'\t', b'\n', b'/', b':', 0, 0x80, 0xff, b'.', b'-'] {
                let mut line: Vec<u8> = (0..n).map(|k| b"9876543210"[k % 10]).collect();
                line.push(end);
                line.extend_from_slice(&[b'7'; 24]);
                assert_eq!(digit_run(&line, 0), slow(&line, 0), "{n} digits then {end:#x}");
            }
        }
        assert_eq!(digit_run(b"18446744073709551615   ", 0), None, "20 digits");
        assert_eq!(digit_run(b"9999999999999999999 xxxxxx", 0), Some((9_999_999_999_999_999_999, 19)));
        assert_eq!(digit_run(b"x2345678901234567", 0), None);
        assert_eq!(digit_run(b"1234567", 0), None, "fewer than 8 bytes: the caller's general path");
        assert_eq!(digit_run(b"12345678 ", 0), None, "a full word and fewer than 8 bytes after it");
        assert_eq!(digit_run(b"12345678        ", 0), Some((12_345_678, 8)));
    }

    proptest! {
        #[test]
        fn agrees_with_a_byte_loop(bytes in proptest::collection::vec(
            prop_oneof![8 => b'0'..=b'9', 1 => any::<u8>(), 1 => Just(b' ')], 0..56), i in 0usize..8) {
            prop_assume!(i < bytes.len());
            if let Some(fast) = digit_run(&bytes, i) {
                prop_assert_eq!(Some(fast), slow(&bytes, i));
            } else if i + 32 <= bytes.len() {
                prop_assert_eq!(slow(&bytes, i), None);
            }
        }
    }
}
