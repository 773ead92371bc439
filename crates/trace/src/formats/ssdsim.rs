//! SSDsim ASCII: `time_ns device lsn size_sectors op` (op 1 = read, 0 = write).
//! MQSim's ASCII traces share the layout ([`super::mqsim`] reuses this parser).

use std::io::Write;

use super::{
    Address, FastLine, FieldErr, Format, LineParser, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail,
    Written, dev, is_int, is_num, is_read, missing, nonzero, num, sector_bytes, sectors, split_ws,
};
use crate::error::Problem;
use crate::swar::digit_run;
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
        Box::new(Ascii5::SSDSIM)
    }
    fn fast_line(&self) -> Option<FastLine> {
        Some(FastLine::Ascii5)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        write_ascii5(out, r)
    }
}

/// The five-column sector-unit parser of SSDsim and MQSim, with the names the format's
/// specification gives its fields, which errors quote: the layouts are the same, the
/// names are not (SSDsim's `lsn` and `op` are MQSim's `lba_sector` and `type`; new-user
/// trial: an MQSim trace's error named a field its documentation does not have).
pub(crate) struct Ascii5 {
    names: [&'static str; 5],
}

impl Ascii5 {
    /// SSDsim's names: `time device lsn size op`.
    pub(crate) const SSDSIM: Ascii5 = Ascii5 { names: ["time", "device", "lsn", "size", "op"] };
    /// MQSim's names: `time device lba_sector size type`.
    pub(crate) const MQSIM: Ascii5 = Ascii5 { names: ["time", "device", "lba_sector", "size", "type"] };
}

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

/// The whole-line fast path of [`Ascii5`], on the line reader's buffer: `b` starts at a
/// line and runs past its end (`\n`). Accepts only the common line — blanks, five
/// fields of 1 to 19 digits separated by blanks, op `0` or `1`, blanks, an optional
/// `\r`, `\n` — with a valid device, a nonzero size and byte values that fit; returns
/// the request and the length of the line with its terminator. That is a subset of
/// what [`plain_ascii5`] accepts after the line reader strips the terminator and the
/// line stage trims it, with the same result; anything else (and a line too close to
/// the end of `b` for 8-byte loads) returns `None` and goes the general way, which
/// words any error. Fields are read 8 bytes at a time ([`crate::swar`]), and the
/// parser finds the line's end itself, so the line reader need not search for it.
#[inline]
pub(crate) fn plain_line(b: &[u8]) -> Option<(RawRequest, usize)> {
    let mut i = skip_blanks(b, 0);
    let (time_ns, e) = digit_run(b, i)?;
    i = after_blank(b, e)?;
    // A device is most often one digit: that costs two compares, not a word.
    let (device, e) = match b.get(i..i + 2) {
        Some(&[d, s]) if d.is_ascii_digit() && is_blank(s) => ((d - b'0') as u64, i + 1),
        _ => digit_run(b, i)?,
    };
    i = after_blank(b, e)?;
    let (lsn, e) = digit_run(b, i)?;
    i = after_blank(b, e)?;
    let (sectors, e) = digit_run(b, i)?;
    i = after_blank(b, e)?;
    let op = match b.get(i)? {
        b'1' => IoOp::Read,
        b'0' => IoOp::Write,
        _ => return None,
    };
    let mut end = skip_blanks(b, i + 1);
    if b.get(end) == Some(&b'\r') {
        end += 1;
    }
    if b.get(end) != Some(&b'\n') || sectors == 0 {
        return None;
    }
    let request = RawRequest {
        time_ns,
        device: u32::try_from(device).ok()?,
        offset: lsn.checked_mul(SECTOR_BYTES)?,
        size: sectors.checked_mul(SECTOR_BYTES)?,
        op,
    };
    Some((request, end + 1))
}

/// The index of the first byte at or after `i` that is not a blank.
#[inline(always)]
fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|&c| is_blank(c)) {
        i += 1;
    }
    i
}

/// After a field ending at `e`: `e` must hold a blank; the index of the next field.
#[inline(always)]
fn after_blank(b: &[u8], e: usize) -> Option<usize> {
    if !is_blank(*b.get(e)?) {
        return None;
    }
    Some(skip_blanks(b, e + 1))
}

impl LineParser for Ascii5 {
    #[inline]
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        match plain_ascii5(line) {
            Some(r) => Ok(Parsed::Request(r)),
            None => general_ascii5(line, &self.names),
        }
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::ws::<5>(line, (self.names[2], 2, SECTOR_BYTES), (self.names[3], 3, SECTOR_BYTES))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::ws::<1>(line, (self.names[0], 0, 1))
    }
}

/// Every other line: split, then parse and check each field, naming the one at fault.
fn general_ascii5<'a>(line: &'a [u8], names: &[&'static str; 5]) -> R<'a> {
    let [time, device, lsn, size, op] = *names;
    let mut f = [&line[..0]; 5];
    let n = split_ws(line, &mut f);
    if n < 5 {
        return Err(missing(line, names, n));
    }
    let time_ns = num(time, f[0])?;
    let device = dev(device, f[1])?;
    let sector = num(lsn, f[2])?;
    let sectors = nonzero(size, f[3], num(size, f[3])?)?;
    let op = match f[4] {
        b"1" => IoOp::Read,
        b"0" => IoOp::Write,
        t => {
            return Err(FieldErr {
                field: op,
                text: t,
                problem: Problem::UnknownOp,
                detail: "1 = read, 0 = write",
            });
        }
    };
    let offset = sector_bytes(lsn, f[2], sector)?;
    let size = sector_bytes(size, f[3], sectors)?;
    Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
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

    fn ssdsim_parse(line: &[u8]) -> R<'_> {
        let mut parser = Ascii5::SSDSIM;
        parser.parse(line)
    }

    fn err(line: &str) -> (&'static str, Problem) {
        match ssdsim_parse(line.as_bytes()) {
            Err(FieldErr { field, problem, .. }) => (field, problem),
            Ok(_) => panic!("accepted: {line}"),
        }
    }

    #[test]
    fn fields() {
        let Ok(Parsed::Request(r)) = ssdsim_parse(b"26214000 1 240840 6 0") else { panic!() };
        assert_eq!(
            r,
            RawRequest { time_ns: 26_214_000, device: 1, offset: 240_840 * 512, size: 3072, op: IoOp::Write }
        );
        let Ok(Parsed::Request(r)) = ssdsim_parse(b"\t0  0 1 1 1  ") else { panic!() };
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
            2 => "[0-9]{1,19}",
            1 => "[0-9]{20}",
            1 => "0{0,3}[1-9][0-9]{15,18}",
            1 => Just("1\r".to_string()),
            1 => Just("1\x00".to_string()),
        ]
    }

    /// What the general way makes of the first line of `buf`: the line reader's
    /// terminator handling, the line stage's trim, then [`Ascii5`].
    /// Also whether the one-pass parser took the line.
    fn general_way(buf: &[u8]) -> Option<(Option<RawRequest>, usize, bool)> {
        let nl = buf.iter().position(|&b| b == b'\n')?;
        let line = &buf[..nl];
        let line = crate::formats::trim(line.strip_suffix(b"\r").unwrap_or(line));
        let request = match ssdsim_parse(line) {
            Ok(Parsed::Request(r)) => Some(r),
            _ => None,
        };
        Some((request, nl + 1, plain_ascii5(line).is_some()))
    }

    proptest! {
        /// The whole-line fast path on the line reader's buffer (the line, its
        /// terminator, whatever follows) accepts only what the general way accepts,
        /// with the same request and line length; and, with 32 bytes after the line
        /// (the reader's buffer has them but within 32 bytes of its end), every
        /// line the one-pass parser accepts.
        #[test]
        fn the_fast_path_agrees_with_the_general_way(
            fields in proptest::collection::vec(token(), 0..7),
            seps in proptest::collection::vec(prop_oneof![Just(" "), Just("\t"), Just("  "), Just(" \t ")], 9),
            end in prop_oneof![Just("\n"), Just("\r\n"), Just(" \r\n"), Just("\r\r\n"), Just("\r \n"), Just(""), Just("\t\n")],
            after in prop_oneof![Just(""), Just("9 0 1 8 1\n"), Just("12345678901234567890123456789012"), Just("\n\n")],
        ) {
            let mut line = seps[8].to_string();
            for (i, f) in fields.iter().enumerate() {
                line.push_str(f);
                if i + 1 < fields.len() {
                    line.push_str(seps[i]);
                }
            }
            let buf = format!("{line}{end}{after}");
            let general = general_way(buf.as_bytes());
            match plain_line(buf.as_bytes()) {
                Some((r, len)) => prop_assert_eq!(general, Some((Some(r), len, true)), "{:?}", buf),
                None => {
                    let missed = matches!(general, Some((_, len, true)) if len + 32 <= buf.len());
                    prop_assert!(!missed, "a plain line missed the fast path: {:?}", buf);
                }
            }
        }

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
            let general = general_ascii5(line.as_bytes(), &Ascii5::SSDSIM.names);
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
