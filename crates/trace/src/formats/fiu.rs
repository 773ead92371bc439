//! FIU SRCMap/IODedup: `ts_ns pid process lba size_blocks R|W major minor md5` — 512 B
//! blocks; process names may contain spaces. The traces ship as tar files (see
//! `source.rs`); NUL padding before a record is skipped.

use std::io::Write;

use super::{
    Address, FieldErr, Format, LineParser, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail, Written,
    dev, is_int, is_read, missing, mkdev, nonzero, num, one_of, sector_bytes, sectors, split_ws, trim,
    word_op,
};
use crate::IoRequest;
use crate::SECTOR_BYTES;
use crate::error::Problem;

/// The FIU format.
pub(crate) struct Fiu;

impl Format for Fiu {
    fn name(&self) -> &'static str {
        "fiu"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["srcmap", "iodedup"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        let (w, n) = (&s.ws, s.nws);
        !s.csv && (9..=16).contains(&n) && is_int(w[0]) && one_of(w[n - 4], &[b"R", b"W"]) && is_int(w[n - 3])
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(FiuParser)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        let (s, n) = sectors(r)?;
        let op = if is_read(r)? { "R" } else { "W" };
        let (major, minor) = (r.device >> 20, r.device & 0xF_FFFF);
        writeln!(out, "{} 0 lamina {s} {n} {op} {major} {minor} 0", r.arrival.as_ns())?;
        Ok(())
    }
}

struct FiuParser;

impl LineParser for FiuParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 9] = ["ts", "pid", "process", "lba", "size", "op", "major", "minor", "md5"];
        let line = after_nul(line);
        if trim(line).is_empty() {
            return Ok(Parsed::Ignore);
        }
        let mut f = [&line[..0]; 16];
        let n = split_ws(line, &mut f);
        if n < 9 {
            return Err(missing(line, &NAMES, n));
        }
        if n > 16 {
            return Err(FieldErr {
                field: "process",
                text: line,
                problem: Problem::Malformed,
                detail: "too many fields",
            });
        }
        // ts and pid from the left, the last six from the right (process names may hold spaces).
        let time_ns = num("ts", f[0])?;
        num("pid", f[1])?;
        let lba = num("lba", f[n - 6])?;
        let blocks = nonzero("size", f[n - 5], num("size", f[n - 5])?)?;
        let op = word_op("op", f[n - 4], "R or W")?;
        let major = dev("major", f[n - 3])?;
        let minor = dev("minor", f[n - 2])?;
        let device = mkdev(("major", f[n - 3], major), ("minor", f[n - 2], minor))?;
        let offset = sector_bytes("lba", f[n - 6], lba)?;
        let size = sector_bytes("size", f[n - 5], blocks)?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        let line = after_nul(line);
        let mut f = [&line[..0]; 16];
        let n = split_ws(line, &mut f);
        let from_right = |i: usize| n.checked_sub(i).filter(|&c| c < f.len()).unwrap_or(f.len());
        Address::of(&f, n, ("lba", from_right(6), SECTOR_BYTES), ("size", from_right(5), SECTOR_BYTES))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::ws::<1>(after_nul(line), ("ts", 0, 1))
    }
}

/// Tar padding / header junk: what follows the last NUL.
fn after_nul(line: &[u8]) -> &[u8] {
    match memchr::memrchr(0, line) {
        Some(i) => &line[i + 1..],
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::IoOp;

    fn req(line: &str) -> RawRequest {
        match FiuParser.parse(line.as_bytes()) {
            Ok(Parsed::Request(r)) => r,
            _ => panic!("{line}"),
        }
    }

    #[test]
    fn fields_and_tar_junk() {
        let r = req("89966527608809 4269 nfsd 46677704 8 W 6 0 2a4dc3f9a5a5e1b4b4d0d4a3c19d6b1e");
        assert_eq!((r.offset, r.size, r.op, r.device), (46_677_704 * 512, 4096, IoOp::Write, 6 << 20));
        let r = req("1 2 my proc 8 8 R 8 16 abc");
        assert_eq!((r.offset, r.device), (4096, 8 << 20 | 16));
        assert_eq!(req("ustar\x00\x00\x00\x005 1 p 8 8 R 8 0 x").time_ns, 5);
    }
}
