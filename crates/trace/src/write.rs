//! Trace writers (`lamina trace convert`, `lamina trace gen`): every built-in format
//! except `generic`, each line written by the format's own module. A request the target
//! format cannot represent exactly (a byte offset in a sector format, a trim in a
//! read/write-only format, sub-100 ns time in MSR filetime, …) is an error, never
//! silently rounded.

use std::io::{self, Write};

use crate::formats::WriteFail;
use crate::{IoRequest, TraceFormat};

/// Why a request cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The format cannot represent this request exactly.
    #[error(
        "request {number} (counting from 1, after any transforms) cannot be written as {format}: {why}; \
         the request: {request}",
        number = index + 1
    )]
    Unrepresentable {
        /// Target format.
        format: TraceFormat,
        /// 0-based index of the request (the message counts from 1, as line numbers do).
        index: u64,
        /// What does not fit, and how to make it fit.
        why: String,
        /// The request in words (arrival, operation, size, offset, device): the numbers
        /// the reason is about.
        request: String,
    },
    /// A comment line was asked of a format that has none ([`TraceFormat::comments`]).
    #[error("{0} has no comment lines (write a format that has, e.g. ssdsim or mqsim)")]
    NoComments(TraceFormat),
    /// The format has no writer.
    #[error("no writer for format {0} (convert to {list})", list = writable_list())]
    NotWritable(TraceFormat),
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The writable formats, comma-separated.
fn writable_list() -> String {
    let v: Vec<&str> = TraceFormat::ALL.iter().filter(|f| f.writable()).map(|f| f.name()).collect();
    v.join(", ")
}

/// Writes requests in one format, one line each.
pub struct TraceWriter<W: Write> {
    out: W,
    format: TraceFormat,
    index: u64,
}

impl<W: Write> TraceWriter<W> {
    /// A writer; writes the header the format has (SYSTOR'17) immediately.
    pub fn new(out: W, format: TraceFormat) -> Result<TraceWriter<W>, WriteError> {
        TraceWriter::with_comment(out, format, None)
    }

    /// A writer whose file starts with the comment line `# {comment}` (before any
    /// header). Errors if the format cannot carry comments ([`TraceFormat::comments`]).
    pub fn with_comment(
        mut out: W,
        format: TraceFormat,
        comment: Option<&str>,
    ) -> Result<TraceWriter<W>, WriteError> {
        if !format.writable() {
            return Err(WriteError::NotWritable(format));
        }
        if let Some(c) = comment {
            if !format.comments() {
                return Err(WriteError::NoComments(format));
            }
            assert!(!c.contains('\n'), "a comment is one line");
            writeln!(out, "# {c}")?;
        }
        if let Some(h) = format.imp().header() {
            writeln!(out, "{h}")?;
        }
        Ok(TraceWriter { out, format, index: 0 })
    }

    /// Write one request.
    pub fn write(&mut self, r: &IoRequest) -> Result<(), WriteError> {
        let fail = |why: &str| WriteError::Unrepresentable {
            format: self.format,
            index: self.index,
            why: why.into(),
            request: format!(
                "arrival {} ns, {:?} of {} B at byte {}, device {}",
                r.arrival.as_ns(),
                r.op,
                r.size_bytes,
                r.offset_bytes,
                r.device
            ),
        };
        if r.size_bytes == 0 {
            return Err(fail("zero-length request"));
        }
        match self.format.imp().write(&mut self.out, r, self.index) {
            Ok(()) => {}
            Err(WriteFail::Unrepresentable(why)) => return Err(fail(why)),
            Err(WriteFail::Io(e)) => return Err(WriteError::Io(e)),
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
    use crate::{IoOp, TraceTime};

    #[test]
    fn ssdsim_line_and_unrepresentable_requests() {
        let r = IoRequest {
            arrival: TraceTime(1500),
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
        w.write(&r).unwrap();
        // Regression (new-user trial finding 6): the message counted from 0.
        let e = w.write(&IoRequest { arrival: TraceTime(150), ..r }).unwrap_err().to_string();
        assert!(
            e.starts_with("request 2 (counting from 1, after any transforms) cannot be written as msr")
                && e.contains("(convert to ssdsim or mqsim, which keep ns)")
                && e.ends_with("the request: arrival 150 ns, Read of 8192 B at byte 4096, device 2"),
            "{e}"
        );
        let mut w = TraceWriter::new(Vec::new(), TraceFormat::Mqsim).unwrap();
        let e = w.write(&IoRequest { offset_bytes: 100, ..r }).unwrap_err().to_string();
        assert!(e.contains("multiples of 512 bytes (align the requests outward: --align 512)"), "{e}");
        let e = TraceWriter::new(Vec::new(), TraceFormat::Generic).err().unwrap();
        assert!(e.to_string().contains("convert to ssdsim, mqsim, msr"), "{e}");
    }

    #[test]
    fn comment_then_header() {
        let w = TraceWriter::with_comment(Vec::new(), TraceFormat::Systor17, Some("hello")).unwrap();
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        assert_eq!(text, "# hello\nTimestamp,Response,IOType,LUN,Offset,Size\n");
    }
}
