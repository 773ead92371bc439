//! Per-format line parsers: one line of text → at most one raw request, without
//! allocating. Time is converted to integer ns in the trace's own clock (absolute;
//! rebasing happens later), offsets and sizes to bytes.

use super::error::Problem;
use super::num::{parse_decimal, parse_u32, parse_u64};
use super::options::{BlkparseEvent, Delimiter, GenericMapping, TimeUnit};
use super::{IoOp, SECTOR_BYTES, TraceFormat};

/// A request as read from a line (absolute trace time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RawRequest {
    pub time_ns: u64,
    pub device: u32,
    pub offset: u64,
    pub size: u64,
    pub op: IoOp,
}

/// The outcome of one line.
pub(crate) enum Parsed {
    Request(RawRequest),
    /// Not a request: a blkparse event of another kind, the blkparse footer, tar padding.
    Ignore,
}

/// A bad field; the caller adds file and line.
pub(crate) struct FieldErr<'a> {
    pub field: &'static str,
    pub text: &'a [u8],
    pub problem: Problem,
    pub detail: &'static str,
}

type R<'a> = Result<Parsed, FieldErr<'a>>;

#[inline]
fn fe<'a>(field: &'static str, text: &'a [u8], problem: Problem) -> FieldErr<'a> {
    FieldErr { field, text, problem, detail: "" }
}

#[inline]
fn num<'a>(field: &'static str, f: &'a [u8]) -> Result<u64, FieldErr<'a>> {
    parse_u64(f).map_err(|p| fe(field, f, p))
}

#[inline]
fn dec<'a>(field: &'static str, f: &'a [u8], digits: u32) -> Result<u64, FieldErr<'a>> {
    parse_decimal(f, digits).map_err(|p| fe(field, f, p))
}

#[inline]
fn dev<'a>(field: &'static str, f: &'a [u8]) -> Result<u32, FieldErr<'a>> {
    parse_u32(f).map_err(|p| fe(field, f, p))
}

#[inline]
fn mul<'a>(field: &'static str, f: &'a [u8], v: u64, by: u64) -> Result<u64, FieldErr<'a>> {
    v.checked_mul(by).ok_or_else(|| fe(field, f, Problem::Overflow))
}

#[inline]
fn nonzero<'a>(field: &'static str, f: &'a [u8], v: u64) -> Result<u64, FieldErr<'a>> {
    if v == 0 { Err(fe(field, f, Problem::ZeroSize)) } else { Ok(v) }
}

#[inline]
fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// Split on runs of spaces/tabs into `out`; returns the total number of fields
/// (which may exceed `N`; only the first `N` are stored).
#[inline]
pub(crate) fn split_ws<'a, const N: usize>(line: &'a [u8], out: &mut [&'a [u8]; N]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while i < len {
        while i < len && is_ws(line[i]) {
            i += 1;
        }
        if i == len {
            break;
        }
        let s = i;
        while i < len && !is_ws(line[i]) {
            i += 1;
        }
        if n < N {
            out[n] = &line[s..i];
        }
        n += 1;
    }
    n
}

/// Split on `sep`, trimming spaces/tabs around fields; returns the total count.
#[inline]
pub(crate) fn split_sep<'a, const N: usize>(line: &'a [u8], sep: u8, out: &mut [&'a [u8]; N]) -> usize {
    let mut n = 0;
    for f in line.split(|&b| b == sep) {
        if n < N {
            out[n] = trim(f);
        }
        n += 1;
    }
    n
}

#[inline]
pub(crate) fn trim(mut f: &[u8]) -> &[u8] {
    while let [b, rest @ ..] = f {
        if is_ws(*b) { f = rest } else { break }
    }
    while let [rest @ .., b] = f {
        if is_ws(*b) { f = rest } else { break }
    }
    f
}

/// Per-format parsing state.
pub(crate) enum LineParser {
    /// SSDsim and MQSim ASCII (the same layout).
    Ascii5,
    Msr,
    Spc,
    Flashnet,
    FlashnetProfile,
    Systor17,
    Tencent,
    Fiu,
    Blkparse {
        event: u8,
        footer: bool,
    },
    Generic(Box<GenericParser>),
}

pub(crate) struct GenericParser {
    sep: Delimiter,
    time_col: usize,
    time_unit: TimeUnit,
    op_col: usize,
    read: Vec<Vec<u8>>,
    write: Vec<Vec<u8>>,
    trim: Vec<Vec<u8>>,
    off_col: usize,
    off_unit: u64,
    size_col: usize,
    size_unit: u64,
    dev_col: Option<usize>,
    need: usize,
}

impl LineParser {
    pub(crate) fn new(
        format: TraceFormat,
        generic: Option<&GenericMapping>,
        blk: BlkparseEvent,
    ) -> LineParser {
        match format {
            TraceFormat::Ssdsim | TraceFormat::Mqsim => LineParser::Ascii5,
            TraceFormat::Msr => LineParser::Msr,
            TraceFormat::Spc => LineParser::Spc,
            TraceFormat::Flashnet => LineParser::Flashnet,
            TraceFormat::FlashnetProfile => LineParser::FlashnetProfile,
            TraceFormat::Systor17 => LineParser::Systor17,
            TraceFormat::Tencent => LineParser::Tencent,
            TraceFormat::Fiu => LineParser::Fiu,
            TraceFormat::Blkparse => LineParser::Blkparse {
                event: if blk == BlkparseEvent::D { b'D' } else { b'Q' },
                footer: false,
            },
            TraceFormat::Generic => {
                let g = generic.expect("validated: generic format has a mapping");
                let lower = |v: &Vec<String>| v.iter().map(|s| s.to_ascii_lowercase().into_bytes()).collect();
                let dev_col = g.device.map(|c| c as usize - 1);
                let need = [g.time.column, g.op.column, g.offset.column, g.size.column, g.device.unwrap_or(0)]
                    .into_iter()
                    .max()
                    .unwrap_or(0) as usize;
                LineParser::Generic(Box::new(GenericParser {
                    sep: g.delimiter,
                    time_col: g.time.column as usize - 1,
                    time_unit: g.time.unit,
                    op_col: g.op.column as usize - 1,
                    read: lower(&g.op.read),
                    write: lower(&g.op.write),
                    trim: lower(&g.op.trim),
                    off_col: g.offset.column as usize - 1,
                    off_unit: g.offset.unit.0 as u64,
                    size_col: g.size.column as usize - 1,
                    size_unit: g.size.unit.0 as u64,
                    dev_col,
                    need,
                }))
            }
        }
    }

    /// Whether the first non-blank line may be a textual header.
    pub(crate) fn allows_header(&self) -> bool {
        !matches!(self, LineParser::Blkparse { .. } | LineParser::Generic(_))
    }

    /// Parse one non-blank line.
    #[inline]
    pub(crate) fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a> {
        match self {
            LineParser::Ascii5 => ascii5(line),
            LineParser::Msr => msr(line),
            LineParser::Spc => spc(line),
            LineParser::Flashnet => flashnet(line),
            LineParser::FlashnetProfile => profile(line),
            LineParser::Systor17 => systor(line),
            LineParser::Tencent => tencent(line),
            LineParser::Fiu => fiu(line),
            LineParser::Blkparse { event, footer } => blkparse(line, *event, footer),
            LineParser::Generic(g) => g.parse(line),
        }
    }
}

fn missing<'a>(line: &'a [u8], names: &[&'static str], have: usize) -> FieldErr<'a> {
    FieldErr {
        field: names.get(have).copied().unwrap_or("?"),
        text: line,
        problem: Problem::Missing,
        detail: "too few fields",
    }
}

#[inline]
fn ascii5(line: &[u8]) -> R<'_> {
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

fn word_op<'a>(field: &'static str, t: &'a [u8], detail: &'static str) -> Result<IoOp, FieldErr<'a>> {
    if t.eq_ignore_ascii_case(b"r") || t.eq_ignore_ascii_case(b"read") {
        Ok(IoOp::Read)
    } else if t.eq_ignore_ascii_case(b"w") || t.eq_ignore_ascii_case(b"write") {
        Ok(IoOp::Write)
    } else {
        Err(FieldErr { field, text: t, problem: Problem::UnknownOp, detail })
    }
}

fn msr(line: &[u8]) -> R<'_> {
    const NAMES: [&str; 7] =
        ["Timestamp", "Hostname", "DiskNumber", "Type", "Offset", "Size", "ResponseTime"];
    let mut f = [&line[..0]; 7];
    let n = split_sep(line, b',', &mut f);
    if n < 6 {
        return Err(missing(line, &NAMES, n));
    }
    let ticks = num("Timestamp", f[0])?;
    let time_ns = mul("Timestamp", f[0], ticks, 100)?;
    let device = dev("DiskNumber", f[2])?;
    let op = word_op("Type", f[3], "Read or Write")?;
    let offset = num("Offset", f[4])?;
    let size = nonzero("Size", f[5], num("Size", f[5])?)?;
    Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
}

fn spc(line: &[u8]) -> R<'_> {
    const NAMES: [&str; 5] = ["ASU", "LBA", "Size", "Opcode", "Timestamp"];
    let mut f = [&line[..0]; 5];
    let n = split_sep(line, b',', &mut f);
    if n < 5 {
        return Err(missing(line, &NAMES, n));
    }
    let device = dev("ASU", f[0])?;
    let lba = num("LBA", f[1])?;
    let offset = mul("LBA", f[1], lba, SECTOR_BYTES)?;
    let size = nonzero("Size", f[2], num("Size", f[2])?)?;
    let op = word_op("Opcode", f[3], "r or w")?;
    let time_ns = dec("Timestamp", f[4], 9)?;
    Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
}

fn bit_op<'a>(
    field: &'static str,
    t: &'a [u8],
    read: &[u8],
    write: &[u8],
    detail: &'static str,
) -> Result<IoOp, FieldErr<'a>> {
    if t == read {
        Ok(IoOp::Read)
    } else if t == write {
        Ok(IoOp::Write)
    } else {
        Err(FieldErr { field, text: t, problem: Problem::UnknownOp, detail })
    }
}

fn flashnet(line: &[u8]) -> R<'_> {
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

fn profile(line: &[u8]) -> R<'_> {
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

fn systor(line: &[u8]) -> R<'_> {
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

fn tencent(line: &[u8]) -> R<'_> {
    const NAMES: [&str; 5] = ["timestamp", "offset", "size", "io_type", "volume_id"];
    let mut f = [&line[..0]; 5];
    let n = split_sep(line, b',', &mut f);
    if n < 5 {
        return Err(missing(line, &NAMES, n));
    }
    let time_ns = dec("timestamp", f[0], 9)?;
    let sectors = num("offset", f[1])?;
    let offset = mul("offset", f[1], sectors, SECTOR_BYTES)?;
    let len = nonzero("size", f[2], num("size", f[2])?)?;
    let size = mul("size", f[2], len, SECTOR_BYTES)?;
    let op = bit_op("io_type", f[3], b"0", b"1", "0 = read, 1 = write")?;
    let device = dev("volume_id", f[4])?;
    Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
}

/// `major << 20 | minor` (the kernel's `MKDEV`), so devices from blkparse and FIU
/// keep distinct ids.
fn mkdev<'a>(field: &'static str, text: &'a [u8], major: u32, minor: u32) -> Result<u32, FieldErr<'a>> {
    if major >= 1 << 12 || minor >= 1 << 20 {
        return Err(FieldErr {
            field,
            text,
            problem: Problem::Overflow,
            detail: "major < 4096, minor < 2^20",
        });
    }
    Ok(major << 20 | minor)
}

fn fiu(line: &[u8]) -> R<'_> {
    const NAMES: [&str; 9] = ["ts", "pid", "process", "lba", "size", "op", "major", "minor", "md5"];
    // Tar padding / header junk: keep what follows the last NUL.
    let line = match memchr::memrchr(0, line) {
        Some(i) => &line[i + 1..],
        None => line,
    };
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
    let device = mkdev("major", f[n - 3], major, minor)?;
    let offset = mul("lba", f[n - 6], lba, SECTOR_BYTES)?;
    let size = mul("size", f[n - 5], blocks, SECTOR_BYTES)?;
    Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
}

/// Parse `maj,min`.
pub(crate) fn blk_device(f: &[u8]) -> Option<(u32, u32)> {
    let i = memchr::memchr(b',', f)?;
    Some((parse_u32(&f[..i]).ok()?, parse_u32(&f[i + 1..]).ok()?))
}

fn blkparse<'a>(line: &'a [u8], event: u8, footer: &mut bool) -> R<'a> {
    const NAMES: [&str; 10] =
        ["dev", "cpu", "seq", "time", "pid", "action", "rwbs", "sector", "+", "nsectors"];
    if *footer {
        return Ok(Parsed::Ignore);
    }
    let mut f = [&line[..0]; 10];
    let n = split_ws(line, &mut f);
    // blkparse ends with per-CPU and total summaries.
    if f[0].starts_with(b"CPU") || f[0] == b"Total" {
        *footer = true;
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
    if f[5] != [event] {
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
    let device = mkdev("dev", f[0], major, minor)?;
    let offset = mul("sector", f[7], sector, SECTOR_BYTES)?;
    let size = mul("nsectors", f[9], nsect, SECTOR_BYTES)?;
    Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
}

impl GenericParser {
    fn parse<'a>(&self, line: &'a [u8]) -> R<'a> {
        const NAMES: [&str; 5] = ["time", "op", "offset", "size", "device"];
        let mut f = [&line[..0]; 64];
        let n = match self.sep {
            Delimiter::Whitespace => split_ws(line, &mut f),
            Delimiter::Char(c) => split_sep(line, c, &mut f),
        };
        if n < self.need {
            let mut cols = [
                (self.time_col, 0),
                (self.op_col, 1),
                (self.off_col, 2),
                (self.size_col, 3),
                (usize::MAX, 4),
            ];
            if let Some(d) = self.dev_col {
                cols[4].0 = d;
            }
            let first_missing =
                cols.iter().filter(|(c, _)| *c != usize::MAX && *c >= n).min().map_or(0, |x| x.1);
            return Err(FieldErr {
                field: NAMES[first_missing],
                text: line,
                problem: Problem::Missing,
                detail: "too few fields",
            });
        }
        let t = f[self.time_col];
        let time_ns = match self.time_unit {
            TimeUnit::Ns => dec("time", t, 0)?,
            TimeUnit::Us => dec("time", t, 3)?,
            TimeUnit::Ms => dec("time", t, 6)?,
            TimeUnit::S => dec("time", t, 9)?,
            TimeUnit::Filetime => mul("time", t, num("time", t)?, 100)?,
        };
        let o = f[self.op_col];
        let has = |list: &Vec<Vec<u8>>| list.iter().any(|c| c.eq_ignore_ascii_case(o));
        let op = if has(&self.read) {
            IoOp::Read
        } else if has(&self.write) {
            IoOp::Write
        } else if has(&self.trim) {
            IoOp::Trim
        } else {
            return Err(FieldErr {
                field: "op",
                text: o,
                problem: Problem::UnknownOp,
                detail: "see the op mapping",
            });
        };
        let of = f[self.off_col];
        let offset = mul("offset", of, num("offset", of)?, self.off_unit)?;
        let sf = f[self.size_col];
        let size = mul("size", sf, nonzero("size", sf, num("size", sf)?)?, self.size_unit)?;
        let device = match self.dev_col {
            Some(c) => dev("device", f[c])?,
            None => 0,
        };
        Ok(Parsed::Request(RawRequest { time_ns, device, offset, size, op }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(p: &mut LineParser, line: &str) -> RawRequest {
        match p.parse(line.as_bytes()) {
            Ok(Parsed::Request(r)) => r,
            Ok(Parsed::Ignore) => panic!("ignored: {line}"),
            Err(e) => panic!("{line}: field {} {:?}", e.field, e.problem),
        }
    }

    fn err(p: &mut LineParser, line: &str) -> (&'static str, Problem) {
        match p.parse(line.as_bytes()) {
            Err(e) => (e.field, e.problem),
            Ok(_) => panic!("accepted: {line}"),
        }
    }

    fn p(f: TraceFormat) -> LineParser {
        LineParser::new(f, None, BlkparseEvent::Q)
    }

    #[test]
    fn ssdsim_fields() {
        let mut a = p(TraceFormat::Ssdsim);
        let r = req(&mut a, "26214000 1 240840 6 0");
        assert_eq!(
            r,
            RawRequest { time_ns: 26_214_000, device: 1, offset: 240_840 * 512, size: 3072, op: IoOp::Write }
        );
        assert_eq!(req(&mut a, "\t0  0 1 1 1  ").op, IoOp::Read);
        assert_eq!(err(&mut a, "0 0 1 abc 1"), ("size", Problem::NotANumber));
        assert_eq!(err(&mut a, "0 0 1 0 1"), ("size", Problem::ZeroSize));
        assert_eq!(err(&mut a, "-5 0 1 1 1"), ("time", Problem::Negative));
        assert_eq!(err(&mut a, "0 0 1 1 2"), ("op", Problem::UnknownOp));
        assert_eq!(err(&mut a, "0 0 1"), ("size", Problem::Missing));
    }

    #[test]
    fn csv_formats() {
        let r = req(&mut p(TraceFormat::Msr), "128166385295514663,hm,0,Write,9056014336,2048,2833");
        assert_eq!(
            (r.time_ns, r.offset, r.size, r.op),
            (12_816_638_529_551_466_300, 9_056_014_336, 2048, IoOp::Write)
        );
        let r = req(&mut p(TraceFormat::Spc), "0,303567,3584,w,0.000000");
        assert_eq!((r.device, r.offset, r.size, r.op), (0, 303_567 * 512, 3584, IoOp::Write));
        let r = req(&mut p(TraceFormat::FlashnetProfile), "12000.000,2080,1,40960,48041984,13004.548,40960");
        assert_eq!((r.time_ns, r.size, r.offset, r.op), (12_000_000_000, 40960, 48_041_984, IoOp::Read));
        let r =
            req(&mut p(TraceFormat::Systor17), "1456095145.133076000,0.000806000,R,0,899056122368,131072");
        assert_eq!((r.time_ns, r.op, r.size), (1_456_095_145_133_076_000, IoOp::Read, 131_072));
        let r = req(&mut p(TraceFormat::Tencent), "1538323200,1024,8,1,1063");
        assert_eq!(
            (r.time_ns, r.offset, r.size, r.op, r.device),
            (1_538_323_200_000_000_000, 524_288, 4096, IoOp::Write, 1063)
        );
        let r = req(&mut p(TraceFormat::Flashnet), "223.412 0 3159347200 36864 0");
        assert_eq!((r.time_ns, r.offset, r.size, r.op), (223_412_000, 3_159_347_200, 36864, IoOp::Write));
    }

    #[test]
    fn fiu_and_blkparse() {
        let mut f = p(TraceFormat::Fiu);
        let r = req(&mut f, "89966527608809 4269 nfsd 46677704 8 W 6 0 2a4dc3f9a5a5e1b4b4d0d4a3c19d6b1e");
        assert_eq!((r.offset, r.size, r.op, r.device), (46_677_704 * 512, 4096, IoOp::Write, 6 << 20));
        let r = req(&mut f, "1 2 my proc 8 8 R 8 16 abc");
        assert_eq!((r.offset, r.device), (4096, 8 << 20 | 16));
        let junk = "ustar\x00\x00\x00\x005 1 p 8 8 R 8 0 x";
        assert_eq!(req(&mut f, junk).time_ns, 5);

        let mut b = p(TraceFormat::Blkparse);
        let r = req(&mut b, "  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]");
        assert_eq!(
            (r.time_ns, r.offset, r.size, r.op, r.device),
            (1850, 1_444_645_666 * 512, 131_072, IoOp::Read, 8 << 20 | 16)
        );
        assert!(matches!(b.parse(b"  8,16 5 3 0.1 18615  G   R 1 + 256 [java]"), Ok(Parsed::Ignore)));
        assert!(matches!(b.parse(b"  8,16 5 0 0.1 0  m   N cfq18615S / insert_request"), Ok(Parsed::Ignore)));
        assert!(matches!(b.parse(b"  8,16 1 9 0.2 77 Q FWS [kjournald]"), Ok(Parsed::Ignore)));
        assert_eq!(req(&mut b, "8,0 0 1 1.0 1 Q DS 8 + 8 [fstrim]").op, IoOp::Trim);
        assert_eq!(err(&mut b, "8x16 5 2 0.1 1 Q R 1 + 8 [j]"), ("dev", Problem::Malformed));
        assert!(matches!(b.parse(b"CPU0 (8,16):"), Ok(Parsed::Ignore)));
        assert!(matches!(b.parse(b" Reads Queued:       5,       20KiB"), Ok(Parsed::Ignore)));
    }

    #[test]
    fn generic_mapping() {
        let m: GenericMapping =
            "delim=; time=2:us op=1:rd/wr/tr offset=3:4k size=4:sector device=5".parse().unwrap();
        let mut g = LineParser::new(TraceFormat::Generic, Some(&m), BlkparseEvent::Q);
        let r = req(&mut g, "TR; 1.5; 2; 8; 3");
        assert_eq!(r, RawRequest { time_ns: 1500, device: 3, offset: 8192, size: 4096, op: IoOp::Trim });
        assert_eq!(err(&mut g, "xx;1;2;8;3"), ("op", Problem::UnknownOp));
        assert_eq!(err(&mut g, "rd;1;2"), ("size", Problem::Missing));
    }
}
