//! FlashNet replayer: `ts_ms device offset_bytes size_bytes type` (1 = read, 0 = write).
//!
//! Detection: a decimal timestamp is FlashNet; with integer timestamps the line also
//! fits SSDsim, and FlashNet wins the tie only if every sampled offset and size is a
//! positive multiple of 512 (byte units) — one sector-unit line makes it SSDsim.

use std::io::Write;

use super::ssdsim::five_ints;
use super::{
    Address, Format, LineParser, NS_PER_MS, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail, Written,
    bit_op, dec, decimal, dev, is_int, is_num, is_read, missing, nonzero, num, split_ws,
};
use crate::IoRequest;
use crate::num::parse_u64;

/// The FlashNet replayer format.
pub(crate) struct Flashnet;

impl Format for Flashnet {
    fn name(&self) -> &'static str {
        "flashnet"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["flashnet-replayer"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        let w = &s.ws;
        let decimal_time = s.nws == 5
            && !s.csv
            && w.iter().take(5).all(|f| is_num(f))
            && w[0].contains(&b'.')
            && (w[4] == b"0" || w[4] == b"1");
        if decimal_time {
            return true;
        }
        let n = |f: &[u8]| parse_u64(f).unwrap_or(1);
        five_ints(s) && n(w[2]) % 512 == 0 && n(w[3]) % 512 == 0 && n(w[3]) > 0 && is_int(w[3])
    }
    fn detect_rank(&self) -> u8 {
        1
    }
    fn parser(&self, _: &ParserSetup<'_>) -> Box<dyn LineParser> {
        Box::new(FlashnetParser)
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, _: u64) -> Result<(), WriteFail> {
        let op = if is_read(r)? { 1 } else { 0 };
        decimal(out, r.arrival.as_ns(), 1_000_000, 6)?;
        writeln!(out, " {} {} {} {op}", r.device, r.offset_bytes, r.size_bytes)?;
        Ok(())
    }
}

struct FlashnetParser;

impl LineParser for FlashnetParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 5] = ["ts_ms", "device", "offset", "size", "type"];
        let mut f = [&line[..0]; 5];
        let n = split_ws(line, &mut f);
        if n < 5 {
            return Err(missing(line, &NAMES, n));
        }
        let time_ns = dec("ts_ms", f[0], 6)?;
        let device = dev("device", f[1])?;
        let offset = num("offset", f[2])?;
        let size = nonzero("size", f[3], num("size", f[3])?)?;
        let op = bit_op("type", f[4], b"1", b"0", "1 = read, 0 = write")?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::ws::<5>(line, ("offset", 2, 1), ("size", 3, 1))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::ws::<1>(line, ("ts_ms", 0, NS_PER_MS))
    }
}
