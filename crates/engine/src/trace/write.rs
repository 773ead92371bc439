//! Trace writers (`lamina trace convert`, `lamina trace gen`): every built-in format
//! except `generic`. A request the target format cannot represent exactly (a byte
//! offset in a sector format, a trim in a read/write-only format, sub-100 ns time in
//! MSR filetime, …) is an error, never silently rounded.

use std::io::{self, Write};

use super::{IoOp, IoRequest, SECTOR_BYTES, TraceFormat};

/// Why a request cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The format cannot represent this request exactly.
    #[error("request #{index} cannot be written as {format}: {why}")]
    Unrepresentable {
        /// Target format.
        format: TraceFormat,
        /// 0-based index of the request.
        index: u64,
        /// What does not fit.
        why: String,
    },
    /// The format has no writer.
    #[error(
        "no writer for format {0} (convert to ssdsim, mqsim, msr, spc, flashnet, flashnet-profile, systor17, tencent, fiu or blkparse)"
    )]
    NotWritable(TraceFormat),
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Writes requests in one format, one line each.
pub struct TraceWriter<W: Write> {
    out: W,
    format: TraceFormat,
    index: u64,
}

/// Write `ns` as a decimal with `digits` fraction digits of `unit_ns`.
fn decimal(out: &mut impl Write, ns: u64, unit_ns: u64, digits: usize) -> io::Result<()> {
    write!(out, "{}.{:0digits$}", ns / unit_ns, ns % unit_ns)
}

impl<W: Write> TraceWriter<W> {
    /// A writer; writes the header the format has (SYSTOR'17) immediately.
    pub fn new(mut out: W, format: TraceFormat) -> Result<TraceWriter<W>, WriteError> {
        if format == TraceFormat::Generic {
            return Err(WriteError::NotWritable(format));
        }
        if format == TraceFormat::Systor17 {
            writeln!(out, "Timestamp,Response,IOType,LUN,Offset,Size")?;
        }
        Ok(TraceWriter { out, format, index: 0 })
    }

    fn unrep(&self, why: impl Into<String>) -> WriteError {
        WriteError::Unrepresentable { format: self.format, index: self.index, why: why.into() }
    }

    fn sectors(&self, r: &IoRequest) -> Result<(u64, u64), WriteError> {
        if r.offset_bytes % SECTOR_BYTES != 0 || r.size_bytes % SECTOR_BYTES != 0 {
            return Err(self.unrep("offset and size must be multiples of 512 bytes"));
        }
        Ok((r.offset_bytes / SECTOR_BYTES, r.size_bytes / SECTOR_BYTES))
    }

    fn rw(&self, r: &IoRequest) -> Result<bool, WriteError> {
        match r.op {
            IoOp::Read => Ok(true),
            IoOp::Write => Ok(false),
            IoOp::Trim => Err(self.unrep("the format has no trim")),
        }
    }

    fn dev0(&self, r: &IoRequest) -> Result<(), WriteError> {
        if r.device != 0 {
            return Err(self.unrep("the format has no device column (fold devices first)"));
        }
        Ok(())
    }

    /// Write one request.
    pub fn write(&mut self, r: &IoRequest) -> Result<(), WriteError> {
        let t = r.arrival.as_ns();
        if r.size_bytes == 0 {
            return Err(self.unrep("zero-length request"));
        }
        match self.format {
            TraceFormat::Ssdsim | TraceFormat::Mqsim => {
                let (s, n) = self.sectors(r)?;
                let op = if self.rw(r)? { 1 } else { 0 };
                writeln!(self.out, "{t} {} {s} {n} {op}", r.device)?;
            }
            TraceFormat::Msr => {
                if t % 100 != 0 {
                    return Err(self.unrep("MSR timestamps are 100 ns ticks"));
                }
                let op = if self.rw(r)? { "Read" } else { "Write" };
                writeln!(
                    self.out,
                    "{},lamina,{},{op},{},{},0",
                    t / 100,
                    r.device,
                    r.offset_bytes,
                    r.size_bytes
                )?;
            }
            TraceFormat::Spc => {
                if r.offset_bytes % SECTOR_BYTES != 0 {
                    return Err(self.unrep("SPC addresses are 512-byte LBAs"));
                }
                let s = r.offset_bytes / SECTOR_BYTES;
                let op = if self.rw(r)? { "r" } else { "w" };
                write!(self.out, "{},{s},{},{op},", r.device, r.size_bytes)?;
                decimal(&mut self.out, t, 1_000_000_000, 9)?;
                writeln!(self.out)?;
            }
            TraceFormat::Flashnet => {
                let op = if self.rw(r)? { 1 } else { 0 };
                decimal(&mut self.out, t, 1_000_000, 6)?;
                writeln!(self.out, " {} {} {} {op}", r.device, r.offset_bytes, r.size_bytes)?;
            }
            TraceFormat::FlashnetProfile => {
                self.dev0(r)?;
                let op = if self.rw(r)? { 1 } else { 0 };
                decimal(&mut self.out, t, 1_000_000, 6)?;
                write!(self.out, ",0,{op},{},{},", r.size_bytes, r.offset_bytes)?;
                decimal(&mut self.out, t, 1_000_000, 6)?;
                writeln!(self.out, ",{}", r.size_bytes)?;
            }
            TraceFormat::Systor17 => {
                let op = if self.rw(r)? { "R" } else { "W" };
                decimal(&mut self.out, t, 1_000_000_000, 9)?;
                writeln!(self.out, ",0,{op},{},{},{}", r.device, r.offset_bytes, r.size_bytes)?;
            }
            TraceFormat::Tencent => {
                if t % 1_000_000_000 != 0 {
                    return Err(self.unrep("Tencent timestamps are whole seconds"));
                }
                let (s, n) = self.sectors(r)?;
                let op = if self.rw(r)? { 0 } else { 1 };
                writeln!(self.out, "{},{s},{n},{op},{}", t / 1_000_000_000, r.device)?;
            }
            TraceFormat::Fiu => {
                let (s, n) = self.sectors(r)?;
                let op = if self.rw(r)? { "R" } else { "W" };
                let (major, minor) = (r.device >> 20, r.device & 0xF_FFFF);
                writeln!(self.out, "{t} 0 lamina {s} {n} {op} {major} {minor} 0")?;
            }
            TraceFormat::Blkparse => {
                let (s, n) = self.sectors(r)?;
                let op = match r.op {
                    IoOp::Read => "R",
                    IoOp::Write => "W",
                    IoOp::Trim => "D",
                };
                let (major, minor) = (r.device >> 20, r.device & 0xF_FFFF);
                write!(self.out, "{major:3},{minor:<3} 0 {:8} ", self.index + 1)?;
                decimal(&mut self.out, t, 1_000_000_000, 9)?;
                writeln!(self.out, " 0  Q {op:>3} {s} + {n} [lamina]")?;
            }
            TraceFormat::Generic => return Err(WriteError::NotWritable(self.format)),
        }
        self.index += 1;
        Ok(())
    }

    /// Flush and return the inner writer.
    pub fn finish(mut self) -> Result<W, WriteError> {
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lamina_nand_model::SimTime;

    #[test]
    fn ssdsim_line_and_unrepresentable_requests() {
        let r = IoRequest {
            arrival: SimTime(1500),
            device: 2,
            offset_bytes: 4096,
            size_bytes: 8192,
            op: IoOp::Read,
        };
        let mut w = TraceWriter::new(Vec::new(), TraceFormat::Ssdsim).unwrap();
        w.write(&r).unwrap();
        assert_eq!(String::from_utf8(w.finish().unwrap()).unwrap(), "1500 2 8 16 1\n");
        let mut w = TraceWriter::new(Vec::new(), TraceFormat::Ssdsim).unwrap();
        assert!(w.write(&IoRequest { offset_bytes: 100, ..r }).is_err());
        assert!(w.write(&IoRequest { op: IoOp::Trim, ..r }).is_err());
        let mut w = TraceWriter::new(Vec::new(), TraceFormat::Msr).unwrap();
        assert!(w.write(&IoRequest { arrival: SimTime(150), ..r }).is_err());
        assert!(TraceWriter::new(Vec::new(), TraceFormat::Generic).is_err());
    }
}
