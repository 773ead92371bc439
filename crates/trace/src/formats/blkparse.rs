//! Default `blkparse` text output: `maj,min cpu seq time_s pid action RWBS sector +
//! nsectors [proc]`. One event kind (`Q` or `D`, option `blkparse_event`) is a request;
//! other events, pure flushes and the closing per-CPU summary are ignored.

use std::io::Write;

use super::{
    Address, FieldErr, Format, LineParser, NS_PER_S, Parsed, ParserSetup, R, RawRequest, Sample, WriteFail,
    Written, dec, decimal, fe, missing, mkdev, num, sector_bytes, sectors, split_ws,
};
use crate::error::Problem;
use crate::num::parse_u32;
use crate::options::BlkparseEvent;
use crate::{IoOp, IoRequest, SECTOR_BYTES};

/// The blkparse format.
pub(crate) struct Blkparse;

/// Parse `maj,min`.
pub(crate) fn blk_device(f: &[u8]) -> Option<(u32, u32)> {
    let i = memchr::memchr(b',', f)?;
    Some((parse_u32(&f[..i]).ok()?, parse_u32(&f[i + 1..]).ok()?))
}

/// blkparse `auto`: does the prefix contain a `Q` event?
fn has_q(prefix: &[u8]) -> bool {
    prefix.split(|&b| b == b'\n').any(|l| {
        let mut w = [&l[..0]; 6];
        split_ws(l, &mut w) >= 6 && w[5] == b"Q"
    })
}

impl Format for Blkparse {
    fn name(&self) -> &'static str {
        "blkparse"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["blktrace"]
    }
    fn sniff(&self, s: &Sample<'_>) -> bool {
        s.nws >= 6 && blk_device(s.ws[0]).is_some()
    }
    fn parser(&self, setup: &ParserSetup<'_>) -> Box<dyn LineParser> {
        let event = match setup.blkparse_event {
            BlkparseEvent::Q => b'Q',
            BlkparseEvent::D => b'D',
            BlkparseEvent::Auto if has_q(setup.prefix) => b'Q',
            BlkparseEvent::Auto => b'D',
        };
        Box::new(BlkParser { event, footer: false })
    }
    fn allows_header(&self) -> bool {
        false
    }
    fn write(&self, out: &mut dyn Write, r: &IoRequest, index: u64) -> Result<(), WriteFail> {
        let (s, n) = sectors(r)?;
        let op = match r.op {
            IoOp::Read => "R",
            IoOp::Write => "W",
            IoOp::Trim => "D",
        };
        let (major, minor) = (r.device >> 20, r.device & 0xF_FFFF);
        write!(out, "{major:3},{minor:<3} 0 {:8} ", index + 1)?;
        decimal(out, r.arrival.as_ns(), 1_000_000_000, 9)?;
        writeln!(out, " 0  Q {op:>3} {s} + {n} [lamina]")?;
        Ok(())
    }
}

struct BlkParser {
    event: u8,
    footer: bool,
}

impl LineParser for BlkParser {
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 10] =
            ["dev", "cpu", "seq", "time", "pid", "action", "rwbs", "sector", "+", "nsectors"];
        if self.footer {
            return Ok(Parsed::Ignore);
        }
        let mut f = [&line[..0]; 10];
        let n = split_ws(line, &mut f);
        // blkparse ends with per-CPU and total summaries.
        if f[0].starts_with(b"CPU") || f[0] == b"Total" {
            self.footer = true;
            return Ok(Parsed::Ignore);
        }
        let Some((major, minor)) = blk_device(f[0]) else {
            return Err(FieldErr {
                field: "dev",
                text: f[0],
                problem: Problem::Malformed,
                detail: "expected maj,min",
            });
        };
        if n < 6 {
            return Err(missing(line, &NAMES, n));
        }
        if f[5] != [self.event] {
            return Ok(Parsed::Ignore);
        }
        if n < 7 {
            return Err(missing(line, &NAMES, n));
        }
        let rwbs = f[6];
        let op = if rwbs.contains(&b'D') {
            IoOp::Trim
        } else if rwbs.contains(&b'W') {
            IoOp::Write
        } else if rwbs.contains(&b'R') {
            IoOp::Read
        } else {
            return Ok(Parsed::Ignore); // no data: N, F (pure flush), …
        };
        let flush = rwbs.contains(&b'F');
        if n < 10 {
            if flush {
                return Ok(Parsed::Ignore);
            }
            return Err(missing(line, &NAMES, n));
        }
        let time_ns = dec("time", f[3], 9)?;
        let sector = num("sector", f[7])?;
        if f[8] != b"+" {
            return Err(FieldErr {
                field: "+",
                text: f[8],
                problem: Problem::Malformed,
                detail: "expected `sector + nsectors`",
            });
        }
        let nsect = num("nsectors", f[9])?;
        if nsect == 0 {
            if flush {
                return Ok(Parsed::Ignore);
            }
            return Err(fe("nsectors", f[9], Problem::ZeroSize));
        }
        let device = mkdev(("dev", f[0], major), ("dev", f[0], minor))?;
        let offset = sector_bytes("sector", f[7], sector)?;
        let size = sector_bytes("nsectors", f[9], nsect)?;
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }

    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>> {
        Address::ws::<10>(line, ("sector", 7, SECTOR_BYTES), ("nsectors", 9, SECTOR_BYTES))
    }

    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>> {
        Written::ws::<4>(line, ("time", 3, NS_PER_S))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_footer_and_flushes() {
        let mut b = BlkParser { event: b'Q', footer: false };
        let Ok(Parsed::Request(r)) =
            b.parse(b"  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]")
        else {
            panic!()
        };
        assert_eq!(
            (r.time_ns, r.offset, r.size, r.op, r.device),
            (1850, 1_444_645_666 * 512, 131_072, IoOp::Read, 8 << 20 | 16)
        );
        assert!(matches!(b.parse(b"  8,16 5 3 0.1 18615  G   R 1 + 256 [java]"), Ok(Parsed::Ignore)));
        assert!(matches!(b.parse(b"  8,16 5 0 0.1 0  m   N cfq18615S / insert_request"), Ok(Parsed::Ignore)));
        assert!(matches!(b.parse(b"  8,16 1 9 0.2 77 Q FWS [kjournald]"), Ok(Parsed::Ignore)));
        let Ok(Parsed::Request(r)) = b.parse(b"8,0 0 1 1.0 1 Q DS 8 + 8 [fstrim]") else { panic!() };
        assert_eq!(r.op, IoOp::Trim);
        assert!(matches!(b.parse(b"8x16 5 2 0.1 1 Q R 1 + 8 [j]"), Err(FieldErr { field: "dev", .. })));
        assert!(matches!(b.parse(b"CPU0 (8,16):"), Ok(Parsed::Ignore)));
        assert!(matches!(b.parse(b" Reads Queued:       5,       20KiB"), Ok(Parsed::Ignore)));
    }
}
