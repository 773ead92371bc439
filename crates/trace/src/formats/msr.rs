//! MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`,
//! Windows filetime (100 ns ticks), `Read`/`Write`, bytes.

use std::io::Write;

use super::{
    Address, FILETIME_OVERFLOW, Format, LineParser, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail,
    Written, dev, is_int, is_read, missing, mul, nonzero, num, one_of, split_sep, word_op,
};
use crate::IoRequest;

/// The MSR Cambridge format.
pub(crate) struct Msr;

impl Format for Msr {
    fn name(&self) -> &'static str {
        "msr"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["msr-csv", "msr-cambridge"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        s.nc == 7 && is_int(s.c[0]) && one_of(s.c[3], &[b"Read", b"Write"])
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(MsrParser)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        let t = r.arrival.as_ns();
        if t % 100 != 0 {
            return Err(WriteFail::Unrepresentable(
                "MSR timestamps are 100 ns ticks (convert to ssdsim or mqsim, which keep ns)",
            ));
        }
        let op = if is_read(r)? { "Read" } else { "Write" };
        writeln!(out, "{},lamina,{},{op},{},{},0", t / 100, r.device, r.offset_bytes, r.size_bytes)?;
        Ok(())
    }
}

struct MsrParser;

impl LineParser for MsrParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 7] =
            ["Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime"];
        let mut f = [&line[..0]; 7];
        let n = split_sep(line, b',', &mut f);
        if n < 6 {
            return Err(missing(line, &NAMES, n));
        }
        let ticks = num("Timestamp", f[0])?;
        let time_ns = mul("Timestamp", f[0], ticks, 100, FILETIME_OVERFLOW)?;
        let device = dev("DiskNumber", f[2])?;
        let op = word_op("Type", f[3], "Read or Write")?;
        let offset = num("Offset", f[4])?;
        let size = nonzero("Size", f[5], num("Size", f[5])?)?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::sep::<6>(line, b',', ("Offset", 4, 1), ("Size", 5, 1))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::sep::<1>(line, b',', ("Timestamp", 0, 100))
    }
}
