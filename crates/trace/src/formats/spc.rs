//! SPC (UMass) CSV: `ASU,LBA,Size,Opcode,Timestamp[,…]` — LBA in sectors, size in
//! bytes, `r`/`w` any case, seconds.

use std::io::Write;

use super::{
    Address, Format, LineParser, NS_PER_S, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail, Written,
    dec, decimal, dev, is_int, is_num, is_read, missing, nonzero, num, one_of, sector_bytes, split_sep,
    word_op,
};
use crate::{IoRequest, SECTOR_BYTES};

/// The SPC format.
pub(crate) struct Spc;

impl Format for Spc {
    fn name(&self) -> &'static str {
        "spc"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["umass", "spc-csv"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        s.nc >= 5 && is_int(s.c[0]) && one_of(s.c[3], &[b"r", b"w"]) && is_num(s.c[4])
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(SpcParser)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        if r.offset_bytes % SECTOR_BYTES != 0 {
            return Err(WriteFail::Unrepresentable(
                "SPC addresses are 512-byte LBAs (align the requests outward: --align 512)",
            ));
        }
        let s = r.offset_bytes / SECTOR_BYTES;
        let op = if is_read(r)? { "r" } else { "w" };
        write!(out, "{},{s},{},{op},", r.device, r.size_bytes)?;
        decimal(out, r.arrival.as_ns(), 1_000_000_000, 9)?;
        writeln!(out)?;
        Ok(())
    }
}

struct SpcParser;

impl LineParser for SpcParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 5] = ["ASU", "LBA", "Size", "Opcode", "Timestamp"];
        let mut f = [&line[..0]; 5];
        let n = split_sep(line, b',', &mut f);
        if n < 5 {
            return Err(missing(line, &NAMES, n));
        }
        let device = dev("ASU", f[0])?;
        let lba = num("LBA", f[1])?;
        let offset = sector_bytes("LBA", f[1], lba)?;
        let size = nonzero("Size", f[2], num("Size", f[2])?)?;
        let op = word_op("Opcode", f[3], "r or w")?;
        let time_ns = dec("Timestamp", f[4], 9)?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::sep::<5>(line, b',', ("LBA", 1, SECTOR_BYTES), ("Size", 2, 1))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::sep::<5>(line, b',', ("Timestamp", 4, NS_PER_S))
    }
}
