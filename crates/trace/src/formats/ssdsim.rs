//! SSDsim ASCII: `time_ns device lsn size_sectors op` (op 1 = read, 0 = write).
//! MQSim's ASCII traces share the layout ([`super::mqsim`] reuses this parser).

use std::io::Write;

use super::{
    FieldErr, Format, LineParser, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail, dev, is_int, is_num,
    is_read, missing, mul, nonzero, num, sectors, split_ws,
};
use crate::error::Problem;
use crate::{IoOp, IoRequest, SECTOR_BYTES};

/// The SSDsim format.
pub(crate) struct Ssdsim;

/// Five numeric whitespace fields, integer time, 0/1 last (shared with MQSim and
/// integer-time FlashNet).
pub(crate) fn five_ints(s: &Sample<'_>) -> bool {
    s.nws == 5
        && !s.csv
        && s.ws.iter().take(5).all(|f| is_num(f))
        && s.ws[..4].iter().all(|f| is_int(f))
        && (s.ws[4] == b"0" || s.ws[4] == b"1")
}

impl Format for Ssdsim {
    fn name(&self) -> &'static str {
        "ssdsim"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["ssdsim-ascii"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        five_ints(s)
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(Ascii5)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        write_ascii5(out, r)
    }
}

/// The five-column sector-unit parser of SSDsim and MQSim.
pub(crate) struct Ascii5;

/// The common line in one pass: exactly five fields of plain digits (at most 19 each),
/// separated by spaces or tabs, with a valid device, a nonzero size, op `0` or `1` and
/// byte values that fit. Anything else — a sign, a bad field, an overflow, a sixth
/// field — returns `None`, and the general parser below decides (and words any error),
/// so both give the same result on every line.
#[inline]
fn plain_ascii5(line: &[u8]) -> Option<RawRequest> {
    let mut rest = line;
    let time_ns = plain_field(&mut rest)?.0;
    let device = u32::try_from(plain_field(&mut rest)?.0).ok()?;
    let lsn = plain_field(&mut rest)?.0;
    let sectors = plain_field(&mut rest)?.0;
    let (op, op_digits) = plain_field(&mut rest)?;
    if sectors == 0 || op_digits != 1 || op > 1 || rest.iter().any(|&b| !is_blank(b)) {
        return None;
    }
    Some(RawRequest {
        time_ns,
        device,
        offset: lsn.checked_mul(SECTOR_BYTES)?,
        size: sectors.checked_mul(SECTOR_BYTES)?,
        op: if op == 1 { IoOp::Read } else { IoOp::Write },
    })
}

#[inline(always)]
fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The next field of `rest` if it is 1 to 19 plain digits followed by a blank or the end:
/// its value and digit count; `rest` moves past it.
#[inline(always)]
fn plain_field(rest: &mut &[u8]) -> Option<(u64, u32)> {
    let mut s = *rest;
    while let [b, tail @ ..] = s
        && is_blank(*b)
    {
        s = tail;
    }
    let mut v = 0u64;
    let mut n = 0u32;
    while let [b, tail @ ..] = s {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(d as u64);
        n += 1;
        s = tail;
    }
    if n == 0 || n > 19 || s.first().is_some_and(|&b| !is_blank(b)) {
        return None;
    }
    *rest = s;
    Some((v, n))
}

impl LineParser for Ascii5 {
    #[inline]
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        match plain_ascii5(line) {
            Some(r) => Ok(Parsed::Request(r)),
            None => general_ascii5(line),
        }
    }
}

/// Every other line: split, then parse and check each field, naming the one at fault.
fn general_ascii5(line: &[u8]) -> R<'_> {
    {
        const NAMES: [&str; 5] = ["time", "device", "lsn", "size", "op"];
        let mut f = [&line[..0]; 5];
        let n = split_ws(line, &mut f);
        if n < 5 {
            return Err(missing(line, &NAMES, n));
        }
        let time_ns = num("time", f[0])?;
        let device = dev("device", f[1])?;
        let lsn = num("lsn", f[2])?;
        let sectors = nonzero("size", f[3], num("size", f[3])?)?;
        let op = match f[4] {
            b"1" => IoOp::Read,
            b"0" => IoOp::Write,
            t => {
                return Err(FieldErr {
                    field: "op",
                    text: t,
                    problem: Problem::UnknownOp,
                    detail: "1 = read, 0 = write",
                });
            }
        };
        let offset = mul("lsn", f[2], lsn, SECTOR_BYTES)?;
        let size = mul("size", f[3], sectors, SECTOR_BYTES)?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }
}

/// `time device sector count op` with op 1 = read, 0 = write.
pub(crate) fn write_ascii5(out: &mut dyn Write, r: &IoRequest) -> Result<(), WriteFail> {
    let (s, n) = sectors(r)?;
    let op = if is_read(r)? { 1 } else { 0 };
    writeln!(out, "{} {} {s} {n} {op}", r.arrival.as_ns(), r.device)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::FieldErr;

    fn err(line: &str) -> (&'static str, Problem) {
        match Ascii5.parse(line.as_bytes()) {
            Err(FieldErr { field, problem, .. }) => (field, problem),
            Ok(_) => panic!("accepted: {line}"),
        }
    }

    #[test]
    fn fields() {
        let Ok(Parsed::Request(r)) = Ascii5.parse(b"26214000 1 240840 6 0") else { panic!() };
        assert_eq!(
            r,
            RawRequest { time_ns: 26_214_000, device: 1, offset: 240_840 * 512, size: 3072, op: IoOp::Write }
        );
        let Ok(Parsed::Request(r)) = Ascii5.parse(b"\t0  0 1 1 1  ") else { panic!() };
        assert_eq!(r.op, IoOp::Read);
        assert_eq!(err("0 0 1 abc 1"), ("size", Problem::NotANumber));
        assert_eq!(err("0 0 1 0 1"), ("size", Problem::ZeroSize));
        assert_eq!(err("-5 0 1 1 1"), ("time", Problem::Negative));
        assert_eq!(err("0 0 1 1 2"), ("op", Problem::UnknownOp));
        assert_eq!(err("0 0 1"), ("size", Problem::Missing));
    }

    use proptest::prelude::*;

    /// Tokens of plain and awkward fields: the one-pass parser must agree with the
    /// general one wherever it answers, and answer on every plain line.
    fn token() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => (0u64..u64::MAX).prop_map(|v| v.to_string()),
            2 => (0u64..3).prop_map(|v| v.to_string()),
            1 => Just("4294967296".to_string()),
            1 => Just("18446744073709551615".to_string()),
            1 => Just("36028797018963968".to_string()),
            1 => Just("0000000000000000000001".to_string()),
            1 => Just("+7".to_string()),
            1 => Just("-1".to_string()),
            1 => Just("1.5".to_string()),
            1 => Just("x".to_string()),
            1 => Just("01".to_string()),
        ]
    }

    proptest! {
        #[test]
        fn the_one_pass_parser_agrees_with_the_general_one(
            fields in proptest::collection::vec(token(), 0..8),
            seps in proptest::collection::vec(prop_oneof![Just(" "), Just("\t"), Just("  "), Just(" \t ")], 9),
        ) {
            let mut line = seps[8].to_string();
            for (f, sep) in fields.iter().zip(&seps) {
                line.push_str(f);
                line.push_str(sep);
            }
            let general = general_ascii5(line.as_bytes());
            match plain_ascii5(line.as_bytes()) {
                Some(r) => prop_assert!(matches!(general, Ok(Parsed::Request(g)) if g == r), "{line:?}"),
                None => {
                    let plain = fields.len() == 5
                        && fields.iter().all(|f| f.len() <= 19 && f.bytes().all(|b| b.is_ascii_digit()))
                        && general.is_ok();
                    prop_assert!(!plain, "a plain line took the general path: {line:?}");
                }
            }
        }
    }
}
