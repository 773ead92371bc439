//! Tencent CBS CSV: `timestamp_s,offset_sectors,size_sectors,io_type,volume_id` —
//! io_type **0 = read, 1 = write**.

use std::io::Write;

use super::{
    Address, Format, LineParser, NS_PER_S, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail, Written,
    bit_op, dec, dev, is_num, is_read, missing, nonzero, num, one_of, sector_bytes, sectors, split_sep,
};
use crate::{IoRequest, SECTOR_BYTES};

/// The Tencent CBS format.
pub(crate) struct Tencent;

impl Format for Tencent {
    fn name(&self) -> &'static str {
        "tencent"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["tencent-cbs"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        s.nc == 5 && s.c.iter().take(5).all(|f| is_num(f)) && one_of(s.c[3], &[b"0", b"1"])
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(TencentParser)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        let t = r.arrival.as_ns();
        if t % 1_000_000_000 != 0 {
            return Err(WriteFail::Unrepresentable(
                "Tencent timestamps are whole seconds (convert to ssdsim or mqsim, which keep ns)",
            ));
        }
        let (s, n) = sectors(r)?;
        let op = if is_read(r)? { 0 } else { 1 };
        writeln!(out, "{},{s},{n},{op},{}", t / 1_000_000_000, r.device)?;
        Ok(())
    }
}

struct TencentParser;

impl LineParser for TencentParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 5] = ["timestamp", "offset", "size", "io_type", "volume_id"];
        let mut f = [&line[..0]; 5];
        let n = split_sep(line, b',', &mut f);
        if n < 5 {
            return Err(missing(line, &NAMES, n));
        }
        let time_ns = dec("timestamp", f[0], 9)?;
        let sectors = num("offset", f[1])?;
        let offset = sector_bytes("offset", f[1], sectors)?;
        let len = nonzero("size", f[2], num("size", f[2])?)?;
        let size = sector_bytes("size", f[2], len)?;
        let op = bit_op("io_type", f[3], b"0", b"1", "0 = read, 1 = write")?;
        let device = dev("volume_id", f[4])?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::sep::<5>(line, b',', ("offset", 1, SECTOR_BYTES), ("size", 2, SECTOR_BYTES))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::sep::<1>(line, b',', ("timestamp", 0, NS_PER_S))
    }
}
