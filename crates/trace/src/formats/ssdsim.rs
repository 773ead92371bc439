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

impl LineParser for Ascii5 {
    #[inline]
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
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
}
