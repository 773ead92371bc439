//! Trace ingestion: read the block I/O traces people actually have, as they are.
//!
//! [`TraceReader`] opens a file (gzip, bzip2, zstd and tar recognised by their magic
//! bytes), sniffs its format from the first lines unless told ([`TraceFormat`]),
//! and streams [`IoRequest`]s parsed on a background thread into a bounded channel,
//! so memory stays bounded whatever the trace size. Every transform (rebase, time
//! scale, device selection and folding, capacity wrap/reject, skip/limit, alignment,
//! reordering) is an explicit field of [`TraceOptions`], the `[trace]` table of a run
//! configuration. Bad input is a [`TraceError`] naming file, line, field and text.
//!
//! ```
//! use lamina_trace::{IoOp, TraceOptions, TraceReader};
//!
//! let text = "0 0 8 8 1\n1000 0 16 8 0\n";
//! let opts = TraceOptions::default();
//! let mut reader =
//!     TraceReader::from_reader("demo.ascii", std::io::Cursor::new(text), None, &opts, u64::MAX).unwrap();
//! let first = reader.next().unwrap().unwrap();
//! assert_eq!((first.offset_bytes, first.size_bytes, first.op), (4096, 4096, IoOp::Read));
//! let second = reader.next().unwrap().unwrap();
//! assert_eq!(second.arrival.as_ns(), 1000);
//! assert!(reader.next().is_none());
//! assert_eq!(reader.summary().requests, 2);
//! ```
//!
//! See `docs/traces.md` for every format, the detection rules and the options.

mod detect;
mod error;
mod formats;
pub mod generator;
mod input;
mod num;
mod options;
mod parser;
mod reader;
mod source;
pub mod stats;
mod swar;
mod timing;
pub mod write;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use error::{Problem, TraceError};
pub use formats::TraceFormat;
pub use generator::{
    Arrival, GenConfig, GenError, Generator, MAX_RATE_IOPS, Pattern, SizeDist, closed_loop_comment,
};
pub use input::{STDIN_NAME, STDIN_PATH, TraceInput, display_name, is_stdin, is_stream};
pub use num::parse_bytes;
pub use options::{
    BlkparseEvent, ByteColumn, ByteUnit, CapacityPolicy, Delimiter, GenericMapping, MAX_REORDER_WINDOW,
    OnError, OpColumn, OutlierPolicy, TimeColumn, TimeScale, TimeUnit, TraceOptions,
};
pub use parser::{
    COARSE_RESOLUTION_NS, CROWDED_INSTANT, GEN_COMMENT, TraceParser, TraceSummary, WorkloadChanges,
};
pub use reader::{RequestSource, Results, TraceReader};
pub use source::Compression;

/// Bytes per sector in every sector-addressed format.
pub const SECTOR_BYTES: u64 = 512;

/// An arrival instant: integer nanoseconds on the replay clock (after rebase and time
/// scale). Its own type because this crate is a leaf: the engine converts it to its
/// `SimTime` at the boundary (`SimTime(t.as_ns())`), and nothing here does arithmetic
/// on time beyond ordering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TraceTime(pub u64);

impl TraceTime {
    /// Time zero.
    pub const ZERO: TraceTime = TraceTime(0);

    /// Nanoseconds.
    #[inline]
    pub const fn as_ns(self) -> u64 {
        self.0
    }
}

impl fmt::Display for TraceTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

/// The operation of a host request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoOp {
    /// Read.
    Read,
    /// Write.
    Write,
    /// Trim / discard (blkparse `D` in RWBS, generic mappings).
    Trim,
}

/// One host I/O request, as replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IoRequest {
    /// Arrival time (after rebase and time scale).
    pub arrival: TraceTime,
    /// Device (volume, LUN, disk) id; 0 after folding.
    pub device: u32,
    /// Byte offset in the device's logical address space.
    pub offset_bytes: u64,
    /// Length in bytes (never 0).
    pub size_bytes: u64,
    /// Operation.
    pub op: IoOp,
}

impl IoRequest {
    /// The first and the last page of `page_bytes` bytes the request touches, as page
    /// numbers of the device's logical address space before any wrapping.
    #[inline]
    pub fn pages(&self, page_bytes: u64) -> (u64, u64) {
        (self.offset_bytes / page_bytes, (self.offset_bytes + self.size_bytes - 1) / page_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_is_small() {
        assert!(std::mem::size_of::<IoRequest>() <= 32);
    }
}
