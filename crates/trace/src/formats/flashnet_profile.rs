//! FlashNet profile: `ts_ms,latency_us,type,size,offset,submit_ts_ms,size` — only
//! ts/type/size/offset are used; device 0.

use std::io::Write;

use super::{
    Address, Format, LineParser, NS_PER_MS, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail, Written,
    bit_op, dec, decimal, device0, is_num, is_read, missing, nonzero, num, one_of, split_sep,
};
use crate::IoRequest;

/// The FlashNet profile format.
pub(crate) struct FlashnetProfile;

impl Format for FlashnetProfile {
    fn name(&self) -> &'static str {
        "flashnet-profile"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["profile"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        s.nc == 7 && s.c.iter().take(7).all(|f| is_num(f)) && one_of(s.c[2], &[b"0", b"1"])
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(ProfileParser)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        device0(r)?;
        let op = if is_read(r)? { 1 } else { 0 };
        let t = r.arrival.as_ns();
        decimal(out, t, 1_000_000, 6)?;
        write!(out, ",0,{op},{},{},", r.size_bytes, r.offset_bytes)?;
        decimal(out, t, 1_000_000, 6)?;
        writeln!(out, ",{}", r.size_bytes)?;
        Ok(())
    }
}

struct ProfileParser;

impl LineParser for ProfileParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 7] = ["ts_ms", "latency_us", "type", "size", "offset", "submit_ts_ms", "size2"];
        let mut f = [&line[..0]; 7];
        let n = split_sep(line, b',', &mut f);
        if n < 5 {
            return Err(missing(line, &NAMES, n));
        }
        let time_ns = dec("ts_ms", f[0], 6)?;
        let op = bit_op("type", f[2], b"1", b"0", "1 = read, 0 = write")?;
        let size = nonzero("size", f[3], num("size", f[3])?)?;
        let offset = num("offset", f[4])?;
        Ok(Parsed::Request(RawRequest { time_ns, device: 0, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::sep::<5>(line, b',', ("offset", 4, 1), ("size", 3, 1))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::sep::<1>(line, b',', ("ts_ms", 0, NS_PER_MS))
    }
}
