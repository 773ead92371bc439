//! The trace formats: one module per format, each implementing [`Format`] (detection
//! vote, line parser, line writer), registered in ONE table, the [`formats!`] call
//! below. Adding a format touches its own file and one row of that table; the
//! [`TraceFormat`] enum, its names, `ALL`, detection and the writers all derive from it.
//!
//! Parsers turn one line of text into at most one raw request without allocating.
//! Time is converted to integer ns in the trace's own clock (absolute; rebasing happens
//! later), offsets and sizes to bytes.

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::Problem;
use crate::num::{parse_decimal, parse_u32, parse_u64};
use crate::options::{BlkparseEvent, GenericMapping};
use crate::{IoOp, IoRequest, SECTOR_BYTES};

mod blkparse;
mod fiu;
mod flashnet;
mod flashnet_profile;
mod generic;
mod mqsim;
mod msr;
mod spc;
mod ssdsim;
mod systor17;
mod tencent;

/// The format registry. Each row: the variant's doc, the variant, the module's
/// [`Format`] implementation. Order is documentation order (and detection's tie order).
macro_rules! formats {
    ($($(#[doc = $doc:literal])* $variant:ident => $imp:expr,)*) => {
        /// A trace format. Names (`FromStr`/`Display`/serde) come from each format's
        /// module: `ssdsim`, `mqsim`, `msr`, `spc`, `flashnet`, `flashnet-profile`,
        /// `systor17`, `tencent`, `fiu`, `blkparse`, `generic`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum TraceFormat {
            $($(#[doc = $doc])* $variant,)*
        }

        impl TraceFormat {
            /// Every format, in documentation order.
            pub const ALL: [TraceFormat; [$(stringify!($variant)),*].len()] = [$(TraceFormat::$variant,)*];

            /// The module implementing this format.
            pub(crate) fn imp(self) -> &'static dyn Format {
                match self {
                    $(TraceFormat::$variant => &$imp,)*
                }
            }
        }
    };
}

formats! {
    /// SSDsim ASCII: `time_ns device lsn size_sectors op` (op 1 = read, 0 = write).
    Ssdsim => ssdsim::Ssdsim,
    /// MQSim ASCII: `time_ns device lba_sector size_sectors type` (1 = read, 0 = write);
    /// the same layout as SSDsim.
    Mqsim => mqsim::Mqsim,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr => msr::Msr,
    /// SPC (UMass) CSV: `ASU,LBA,Size,Opcode,Timestamp[,…]`.
    Spc => spc::Spc,
    /// FlashNet replayer: `ts_ms device offset_bytes size_bytes type`.
    Flashnet => flashnet::Flashnet,
    /// FlashNet profile: `ts_ms,latency_us,type,size_bytes,offset_bytes,submit_ts_ms,size_bytes`.
    FlashnetProfile => flashnet_profile::FlashnetProfile,
    /// SNIA SYSTOR'17 CSV: `Timestamp,Response,IOType,LUN,Offset,Size`.
    Systor17 => systor17::Systor17,
    /// Tencent CBS CSV: `timestamp_s,offset_sectors,size_sectors,io_type,volume_id`.
    Tencent => tencent::Tencent,
    /// FIU SRCMap/IODedup: `ts_ns pid process lba size_blocks R|W major minor md5`.
    Fiu => fiu::Fiu,
    /// Default `blkparse` text output (`Q` or `D` events).
    Blkparse => blkparse::Blkparse,
    /// Any CSV/whitespace layout described by a [`GenericMapping`].
    Generic => generic::Generic,
}

/// One trace format: its names, its detection vote, its line parser and (if the format
/// can represent requests) its line writer.
pub(crate) trait Format: Sync {
    /// The canonical name (`--format`, serde, reports).
    fn name(&self) -> &'static str;

    /// Other accepted names (lower case).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }

    /// Does this sample line look like this format? Detection counts the yes votes of
    /// each format over the first lines; the most votes win, ties go to the higher
    /// [`Format::detect_rank`], then to the earlier row of the table.
    fn sniff(&self, line: &Sample<'_>) -> bool;

    /// Tie-break rank in detection (default 0).
    fn detect_rank(&self) -> u8 {
        0
    }

    /// A line parser for a trace of this format.
    fn parser(&self, setup: &ParserSetup<'_>) -> Box<dyn LineParser>;

    /// Whether the first non-blank line may be a textual header (skipped).
    fn allows_header(&self) -> bool {
        true
    }

    /// Whether a line starting with `#` is a comment (ignored). True for every built-in
    /// format (none has a field starting with `#`); false for `generic`, whose columns
    /// are the user's.
    fn comments(&self) -> bool {
        true
    }

    /// The header line a file of this format starts with, if any.
    fn header(&self) -> Option<&'static str> {
        None
    }

    /// A whole-line fast path for the format's common line (see [`FastLine`]), if it
    /// has one.
    fn fast_line(&self) -> Option<FastLine> {
        None
    }

    /// Whether [`Format::write`] is implemented.
    fn writable(&self) -> bool {
        true
    }

    /// Write one request as one line. `index` is the 0-based request number.
    fn write(&self, out: &mut dyn Write, r: &IoRequest, index: u64) -> Result<(), WriteFail> {
        let _ = (out, r, index);
        Err(WriteFail::Unrepresentable("the format has no writer"))
    }
}

/// Why [`Format::write`] failed (the caller adds format and request index).
pub(crate) enum WriteFail {
    /// The format cannot represent the request exactly.
    Unrepresentable(&'static str),
    /// Writing failed.
    Io(io::Error),
}

impl From<io::Error> for WriteFail {
    fn from(e: io::Error) -> WriteFail {
        WriteFail::Io(e)
    }
}

/// What a format's parser may need besides the line.
pub(crate) struct ParserSetup<'a> {
    /// The generic column mapping (validated present for `generic`).
    pub generic: Option<&'a GenericMapping>,
    /// The configured blkparse event.
    pub blkparse_event: BlkparseEvent,
    /// The first bytes of the decompressed text (for look-ahead decisions).
    pub prefix: &'a [u8],
}

/// A format's fast path over the line reader's buffer: given the bytes from the start
/// of a line on (past its end), the request and the length of the line with its `\n`
/// — or `None`, and the line goes the general way (line reader, line stage, the
/// format's [`LineParser`]). It may accept only lines on which the general way gives
/// the same request, so it never changes a result or an error.
///
/// A closed set rather than a function pointer: the parser's loop calls the chosen
/// path directly, so the compiler can inline it and keep the parsed fields in registers
/// (through a pointer, the request went through memory in 8-byte stores that the loop
/// read back in 16-byte loads, which the store buffer cannot forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FastLine {
    /// Five whitespace-separated ASCII columns (SSDsim, MQSim): [`ssdsim::plain_line`].
    Ascii5,
}

impl FastLine {
    /// Parse the line at the start of `b` this way (see [`FastLine`]).
    #[inline(always)]
    pub(crate) fn parse(self, b: &[u8]) -> Option<(RawRequest, usize)> {
        match self {
            FastLine::Ascii5 => ssdsim::plain_line(b),
        }
    }
}

/// A line parser (per-trace state lives in the implementing type).
pub(crate) trait LineParser: Send {
    /// Parse one non-blank, non-comment line.
    fn parse<'a>(&mut self, line: &'a [u8]) -> R<'a>;

    /// Where a line this parser accepted writes its offset and size: what an error
    /// found after parsing (an overflow after folding, a request beyond the capacity)
    /// quotes, so that it names the field as the file writes it (`lsn` `"1000"`), not
    /// the bytes computed from it. Cold: called only for such an error.
    fn address<'a>(&self, line: &'a [u8]) -> Option<Address<'a>>;

    /// Where a line this parser accepted writes its timestamp, with the nanoseconds
    /// one unit of it stands for (1 for ns, 100 for filetime ticks, 10^9 for seconds):
    /// what an out-of-order error quotes. Cold, like [`LineParser::address`].
    fn time<'a>(&self, line: &'a [u8]) -> Option<Written<'a>>;
}

/// A field as a line writes it, and what one unit of it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Written<'a> {
    /// The field's name in the format's specification (as in parse errors).
    pub field: &'static str,
    /// Its text in the line.
    pub text: &'a [u8],
    /// An address: bytes per unit (512 for sectors, 1 for bytes). A time: ns per unit.
    pub unit: u64,
}

/// Nanoseconds per second, the unit of a timestamp in seconds.
pub(crate) const NS_PER_S: u64 = 1_000_000_000;
/// Nanoseconds per millisecond.
pub(crate) const NS_PER_MS: u64 = 1_000_000;

impl<'a> Written<'a> {
    /// Column `col` of a whitespace-separated line of at least `N` fields.
    pub(crate) fn ws<const N: usize>(line: &'a [u8], (field, i, unit): Col) -> Option<Written<'a>> {
        let mut f = [&line[..0]; N];
        let n = split_ws(line, &mut f);
        Some(Written { field, text: f[..n.min(N)].get(i)?, unit })
    }

    /// Column `col` of a line of at least `N` fields separated by `sep`.
    pub(crate) fn sep<const N: usize>(line: &'a [u8], sep: u8, (field, i, unit): Col) -> Option<Written<'a>> {
        let mut f = [&line[..0]; N];
        let n = split_sep(line, sep, &mut f);
        Some(Written { field, text: f[..n.min(N)].get(i)?, unit })
    }
}

/// The offset and size fields of a line (see [`LineParser::address`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Address<'a> {
    pub offset: Written<'a>,
    pub size: Written<'a>,
}

/// A column: its name, 0-based index and what one unit stands for (see [`Written`]).
pub(crate) type Col = (&'static str, usize, u64);

impl<'a> Address<'a> {
    /// The two columns of `fields` (the first `n` are the line's).
    pub(crate) fn of(fields: &[&'a [u8]], n: usize, offset: Col, size: Col) -> Option<Address<'a>> {
        let fields = &fields[..n.min(fields.len())];
        let written = |(field, i, unit): Col| Some(Written { field, text: fields.get(i)?, unit });
        Some(Address { offset: written(offset)?, size: written(size)? })
    }

    /// The two columns of a whitespace-separated line of at least `N` fields.
    pub(crate) fn ws<const N: usize>(line: &'a [u8], offset: Col, size: Col) -> Option<Address<'a>> {
        Some(Address { offset: Written::ws::<N>(line, offset)?, size: Written::ws::<N>(line, size)? })
    }

    /// The two columns of a line of at least `N` fields separated by `sep`.
    pub(crate) fn sep<const N: usize>(
        line: &'a [u8],
        sep: u8,
        offset: Col,
        size: Col,
    ) -> Option<Address<'a>> {
        Some(Address {
            offset: Written::sep::<N>(line, sep, offset)?,
            size: Written::sep::<N>(line, sep, size)?,
        })
    }
}

/// A line split once for detection: whitespace fields and comma fields.
pub(crate) struct Sample<'a> {
    /// Whitespace fields (first 16).
    pub ws: [&'a [u8]; 16],
    /// Number of whitespace fields (may exceed 16).
    pub nws: usize,
    /// Whether the line holds a comma.
    pub csv: bool,
    /// Comma fields (first 8), trimmed.
    pub c: [&'a [u8]; 8],
    /// Number of comma fields.
    pub nc: usize,
}

impl<'a> Sample<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Sample<'a> {
        let line = match memchr::memrchr(0, line) {
            Some(i) => &line[i + 1..],
            None => line,
        };
        let mut ws = [&line[..0]; 16];
        let nws = split_ws(line, &mut ws);
        let csv = memchr::memchr(b',', line).is_some();
        let mut c = [&line[..0]; 8];
        let nc = if csv { split_sep(line, b',', &mut c) } else { 0 };
        Sample { ws, nws, csv, c, nc }
    }
}

/// A non-empty run of digits with at most... any dots: a decimal-looking field.
pub(crate) fn is_num(f: &[u8]) -> bool {
    !f.is_empty() && f.iter().all(|b| b.is_ascii_digit() || *b == b'.') && f.iter().any(u8::is_ascii_digit)
}

/// A non-empty run of digits.
pub(crate) fn is_int(f: &[u8]) -> bool {
    !f.is_empty() && f.iter().all(u8::is_ascii_digit)
}

/// Case-insensitive membership.
pub(crate) fn one_of(f: &[u8], words: &[&[u8]]) -> bool {
    words.iter().any(|w| f.eq_ignore_ascii_case(w))
}

impl TraceFormat {
    /// The canonical name.
    pub fn name(self) -> &'static str {
        self.imp().name()
    }

    /// Whether `lamina trace convert`/`gen` can write this format.
    pub fn writable(self) -> bool {
        self.imp().writable()
    }

    /// Whether lines starting with `#` are comments in this format (so a generated
    /// trace can carry its `# lamina-trace-gen:` line).
    pub fn comments(self) -> bool {
        self.imp().comments()
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;
    fn from_str(s: &str) -> Result<TraceFormat, String> {
        let l = s.to_ascii_lowercase();
        TraceFormat::ALL
            .into_iter()
            .find(|f| f.name() == l || f.imp().aliases().contains(&l.as_str()))
            .ok_or_else(|| {
                let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
                format!("unknown trace format {s:?} (known: {})", names.join(", "))
            })
    }
}

impl Serialize for TraceFormat {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for TraceFormat {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<TraceFormat, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

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

pub(crate) type R<'a> = Result<Parsed, FieldErr<'a>>;

#[inline]
pub(crate) fn fe<'a>(field: &'static str, text: &'a [u8], problem: Problem) -> FieldErr<'a> {
    FieldErr { field, text, problem, detail: "" }
}

#[inline]
pub(crate) fn num<'a>(field: &'static str, f: &'a [u8]) -> Result<u64, FieldErr<'a>> {
    parse_u64(f).map_err(|p| fe(field, f, p))
}

#[inline]
pub(crate) fn dec<'a>(field: &'static str, f: &'a [u8], digits: u32) -> Result<u64, FieldErr<'a>> {
    parse_decimal(f, digits).map_err(|p| fe(field, f, p))
}

#[inline]
pub(crate) fn dev<'a>(field: &'static str, f: &'a [u8]) -> Result<u32, FieldErr<'a>> {
    parse_u32(f).map_err(|p| fe(field, f, p))
}

/// `v × by`, or an overflow of the field `f` saying what the product is (`detail`).
#[inline]
pub(crate) fn mul<'a>(
    field: &'static str,
    f: &'a [u8],
    v: u64,
    by: u64,
    detail: &'static str,
) -> Result<u64, FieldErr<'a>> {
    v.checked_mul(by).ok_or(FieldErr { field, text: f, problem: Problem::Overflow, detail })
}

/// The overflow detail of a Windows filetime (100 ns ticks).
pub(crate) const FILETIME_OVERFLOW: &str = "100 ns ticks: × 100 it exceeds 2^64 ns";
/// The overflow detail of a generic mapping's offset or size unit.
pub(crate) const UNIT_OVERFLOW: &str = "× the mapping's unit it exceeds 2^64 bytes";

/// A count of 512-byte sectors in bytes.
#[inline]
pub(crate) fn sector_bytes<'a>(field: &'static str, f: &'a [u8], v: u64) -> Result<u64, FieldErr<'a>> {
    mul(field, f, v, SECTOR_BYTES, "512-byte sectors: × 512 it exceeds 2^64 bytes")
}

#[inline]
pub(crate) fn nonzero<'a>(field: &'static str, f: &'a [u8], v: u64) -> Result<u64, FieldErr<'a>> {
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

/// Trim spaces and tabs.
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

/// "Too few fields": names the first missing field.
pub(crate) fn missing<'a>(line: &'a [u8], names: &[&'static str], have: usize) -> FieldErr<'a> {
    FieldErr {
        field: names.get(have).copied().unwrap_or("?"),
        text: line,
        problem: Problem::Missing,
        detail: "too few fields",
    }
}

/// `r`/`read` or `w`/`write`, any case.
pub(crate) fn word_op<'a>(
    field: &'static str,
    t: &'a [u8],
    detail: &'static str,
) -> Result<IoOp, FieldErr<'a>> {
    if t.eq_ignore_ascii_case(b"r") || t.eq_ignore_ascii_case(b"read") {
        Ok(IoOp::Read)
    } else if t.eq_ignore_ascii_case(b"w") || t.eq_ignore_ascii_case(b"write") {
        Ok(IoOp::Write)
    } else {
        Err(FieldErr { field, text: t, problem: Problem::UnknownOp, detail })
    }
}

/// An exact read code and write code.
pub(crate) fn bit_op<'a>(
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

/// A device number as a line writes it: field name, text, value.
pub(crate) type DevPart<'a> = (&'static str, &'a [u8], u32);

/// `major << 20 | minor` (the kernel's `MKDEV`), so devices from blkparse and FIU
/// keep distinct ids. A number too large names the field that holds it.
pub(crate) fn mkdev<'a>(major: DevPart<'a>, minor: DevPart<'a>) -> Result<u32, FieldErr<'a>> {
    let too_large =
        |(field, text, _): DevPart<'a>, detail| FieldErr { field, text, problem: Problem::Overflow, detail };
    if major.2 >= 1 << 12 {
        return Err(too_large(major, "a major device number must be below 4096"));
    }
    if minor.2 >= 1 << 20 {
        return Err(too_large(minor, "a minor device number must be below 1048576 (2^20)"));
    }
    Ok(major.2 << 20 | minor.2)
}

// ---- writer helpers ----

/// Write `ns` as a decimal with `digits` fraction digits of `unit_ns`.
pub(crate) fn decimal(out: &mut dyn Write, ns: u64, unit_ns: u64, digits: usize) -> io::Result<()> {
    write!(out, "{}.{:0digits$}", ns / unit_ns, ns % unit_ns)
}

/// Offset and size in sectors, if both are whole sectors.
pub(crate) fn sectors(r: &IoRequest) -> Result<(u64, u64), WriteFail> {
    if r.offset_bytes % SECTOR_BYTES != 0 || r.size_bytes % SECTOR_BYTES != 0 {
        return Err(WriteFail::Unrepresentable(
            "offset and size must be multiples of 512 bytes (align the requests outward: --align 512)",
        ));
    }
    Ok((r.offset_bytes / SECTOR_BYTES, r.size_bytes / SECTOR_BYTES))
}

/// True for a read, false for a write; a trim is not representable.
pub(crate) fn is_read(r: &IoRequest) -> Result<bool, WriteFail> {
    match r.op {
        IoOp::Read => Ok(true),
        IoOp::Write => Ok(false),
        IoOp::Trim => {
            Err(WriteFail::Unrepresentable("the format has no trim (convert to blkparse, which has)"))
        }
    }
}

/// The format has no device column.
pub(crate) fn device0(r: &IoRequest) -> Result<(), WriteFail> {
    if r.device != 0 {
        return Err(WriteFail::Unrepresentable(
            "the format has no device column (fold devices first: --fold-devices, or keep one: --device ID)",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for f in TraceFormat::ALL {
            assert_eq!(f.name().parse::<TraceFormat>().unwrap(), f);
            let json = serde_json::to_string(&f).unwrap();
            assert_eq!(json, format!("\"{}\"", f.name()));
            for a in f.imp().aliases() {
                assert_eq!(a.parse::<TraceFormat>().unwrap(), f, "alias {a}");
            }
        }
        assert!("nope".parse::<TraceFormat>().is_err());
        assert_eq!("MSR-Cambridge".parse::<TraceFormat>().unwrap(), TraceFormat::Msr);
    }

    fn parse(f: TraceFormat, line: &str) -> RawRequest {
        let setup = ParserSetup { generic: None, blkparse_event: BlkparseEvent::Q, prefix: b"" };
        match f.imp().parser(&setup).parse(line.as_bytes()) {
            Ok(Parsed::Request(r)) => r,
            _ => panic!("{f}: {line}"),
        }
    }

    #[test]
    fn csv_formats() {
        let r = parse(TraceFormat::Msr, "128166385295514663,hm,0,Write,9056014336,2048,2833");
        assert_eq!(
            (r.time_ns, r.offset, r.size, r.op),
            (12_816_638_529_551_466_300, 9_056_014_336, 2048, IoOp::Write)
        );
        let r = parse(TraceFormat::Spc, "0,303567,3584,w,0.000000");
        assert_eq!((r.device, r.offset, r.size, r.op), (0, 303_567 * 512, 3584, IoOp::Write));
        let r = parse(TraceFormat::FlashnetProfile, "12000.000,2080,1,40960,48041984,13004.548,40960");
        assert_eq!((r.time_ns, r.size, r.offset, r.op), (12_000_000_000, 40960, 48_041_984, IoOp::Read));
        let r = parse(TraceFormat::Systor17, "1456095145.133076000,0.000806000,R,0,899056122368,131072");
        assert_eq!((r.time_ns, r.op, r.size), (1_456_095_145_133_076_000, IoOp::Read, 131_072));
        let r = parse(TraceFormat::Tencent, "1538323200,1024,8,1,1063");
        assert_eq!(
            (r.time_ns, r.offset, r.size, r.op, r.device),
            (1_538_323_200_000_000_000, 524_288, 4096, IoOp::Write, 1063)
        );
        let r = parse(TraceFormat::Flashnet, "223.412 0 3159347200 36864 0");
        assert_eq!((r.time_ns, r.offset, r.size, r.op), (223_412_000, 3_159_347_200, 36864, IoOp::Write));
    }

    /// Every format's parser and writer agree on a line the writer produced.
    #[test]
    fn every_writable_format_parses_its_own_line() {
        let r = IoRequest {
            arrival: crate::TraceTime(2_000_000_000),
            device: 0,
            offset_bytes: 8192,
            size_bytes: 4096,
            op: IoOp::Write,
        };
        for f in TraceFormat::ALL.into_iter().filter(|f| f.writable()) {
            let mut out = Vec::new();
            if let Err(WriteFail::Unrepresentable(why)) = f.imp().write(&mut out, &r, 0) {
                panic!("{f}: {why}");
            }
            let setup = ParserSetup { generic: None, blkparse_event: BlkparseEvent::Q, prefix: &out };
            let mut p = f.imp().parser(&setup);
            let line = out.strip_suffix(b"\n").unwrap();
            let Ok(Parsed::Request(raw)) = p.parse(line) else {
                panic!("{f}: {:?}", String::from_utf8_lossy(line))
            };
            assert_eq!(
                (raw.time_ns, raw.offset, raw.size, raw.op),
                (2_000_000_000, 8192, 4096, IoOp::Write),
                "{f}"
            );
        }
    }
}
