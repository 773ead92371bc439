//! SNIA SYSTOR'17 CSV: `Timestamp,Response,IOType,LUN,Offset,Size` — seconds, `R`/`W`,
//! bytes; header optional; not time-ordered.

use std::io::Write;

use super::{
    Address, Format, LineParser, NS_PER_S, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail, Written,
    dec, decimal, dev, is_num, is_read, missing, nonzero, num, one_of, split_sep, word_op,
};
use crate::IoRequest;

/// The SYSTOR'17 format.
pub(crate) struct Systor17;

impl Format for Systor17 {
    fn name(&self) -> &'static str {
        "systor17"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["systor", "systor-17"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        (s.c[0].eq_ignore_ascii_case(b"Timestamp") && s.nc >= 3 && s.c[2].eq_ignore_ascii_case(b"IOType"))
            || (s.nc == 6 && is_num(s.c[0]) && one_of(s.c[2], &[b"R", b"W"]))
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(SystorParser)
    }
    fn header(&self) -> Option<&'static str> {
        Some("Timestamp,Response,IOType,LUN,Offset,Size")
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        let op = if is_read(r)? { "R" } else { "W" };
        decimal(out, r.arrival.as_ns(), 1_000_000_000, 9)?;
        writeln!(out, ",0,{op},{},{},{}", r.device, r.offset_bytes, r.size_bytes)?;
        Ok(())
    }
}

struct SystorParser;

impl LineParser for SystorParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 6] = ["Timestamp", "Response", "IOType", "LUN", "Offset", "Size"];
        let mut f = [&line[..0]; 6];
        let n = split_sep(line, b',', &mut f);
        if n < 6 {
            return Err(missing(line, &NAMES, n));
        }
        let time_ns = dec("Timestamp", f[0], 9)?;
        let op = word_op("IOType", f[2], "R or W")?;
        let device = dev("LUN", f[3])?;
        let offset = num("Offset", f[4])?;
        let size = nonzero("Size", f[5], num("Size", f[5])?)?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::sep::<6>(line, b',', ("Offset", 4, 1), ("Size", 5, 1))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::sep::<1>(line, b',', ("Timestamp", 0, NS_PER_S))
    }
}
