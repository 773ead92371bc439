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
//! use lamina_engine::trace::{IoOp, TraceOptions, TraceReader};
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
mod num;
mod options;
mod parser;
mod reader;
mod source;
pub mod stats;
pub mod write;

use std::fmt;
use std::str::FromStr;

use lamina_nand_model::SimTime;
use serde::{Deserialize, Serialize};

pub use error::{Problem, TraceError};
pub use generator::{Arrival, GenConfig, Generator, Pattern, SizeDist};
pub use num::parse_bytes;
pub use options::{
    BlkparseEvent, ByteColumn, ByteUnit, CapacityPolicy, Delimiter, GenericMapping, MAX_REORDER_WINDOW,
    OnError, OpColumn, TimeColumn, TimeScale, TimeUnit, TraceOptions,
};
pub use parser::{TraceParser, TraceSummary};
pub use reader::TraceReader;
pub use source::Compression;

/// Bytes per sector in every sector-addressed format.
pub const SECTOR_BYTES: u64 = 512;

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
    pub arrival: SimTime,
    /// Device (volume, LUN, disk) id; 0 after folding.
    pub device: u32,
    /// Byte offset in the device's logical address space.
    pub offset_bytes: u64,
    /// Length in bytes (never 0).
    pub size_bytes: u64,
    /// Operation.
    pub op: IoOp,
}

/// A trace format. Names (`FromStr`/`Display`/serde): `ssdsim`, `mqsim`, `msr`, `spc`,
/// `flashnet`, `flashnet-profile`, `systor17`, `tencent`, `fiu`, `blkparse`, `generic`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// SSDsim ASCII: `time_ns device lsn size_sectors op` (op 1 = read, 0 = write).
    Ssdsim,
    /// MQSim ASCII: `time_ns device lba_sector size_sectors type` (1 = read, 0 = write);
    /// the same layout as SSDsim.
    Mqsim,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// SPC (UMass) CSV: `ASU,LBA,Size,Opcode,Timestamp[,…]`.
    Spc,
    /// FlashNet replayer: `ts_ms device offset_bytes size_bytes type`.
    Flashnet,
    /// FlashNet profile: `ts_ms,latency_us,type,size_bytes,offset_bytes,submit_ts_ms,size_bytes`.
    FlashnetProfile,
    /// SNIA SYSTOR'17 CSV: `Timestamp,Response,IOType,LUN,Offset,Size`.
    Systor17,
    /// Tencent CBS CSV: `timestamp_s,offset_sectors,size_sectors,io_type,volume_id`.
    Tencent,
    /// FIU SRCMap/IODedup: `ts_ns pid process lba size_blocks R|W major minor md5`.
    Fiu,
    /// Default `blkparse` text output (`Q` or `D` events).
    Blkparse,
    /// Any CSV/whitespace layout described by a [`GenericMapping`].
    Generic,
}

impl TraceFormat {
    /// Every format, in documentation order.
    pub const ALL: [TraceFormat; 11] = [
        TraceFormat::Ssdsim,
        TraceFormat::Mqsim,
        TraceFormat::Msr,
        TraceFormat::Spc,
        TraceFormat::Flashnet,
        TraceFormat::FlashnetProfile,
        TraceFormat::Systor17,
        TraceFormat::Tencent,
        TraceFormat::Fiu,
        TraceFormat::Blkparse,
        TraceFormat::Generic,
    ];

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Ssdsim => "ssdsim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Flashnet => "flashnet",
            TraceFormat::FlashnetProfile => "flashnet-profile",
            TraceFormat::Systor17 => "systor17",
            TraceFormat::Tencent => "tencent",
            TraceFormat::Fiu => "fiu",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::Generic => "generic",
        }
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
        let f = match l.as_str() {
            "ssdsim" | "ssdsim-ascii" => TraceFormat::Ssdsim,
            "mqsim" | "mqsim-ascii" => TraceFormat::Mqsim,
            "msr" | "msr-csv" | "msr-cambridge" => TraceFormat::Msr,
            "spc" | "umass" | "spc-csv" => TraceFormat::Spc,
            "flashnet" | "flashnet-replayer" => TraceFormat::Flashnet,
            "flashnet-profile" | "profile" => TraceFormat::FlashnetProfile,
            "systor17" | "systor" | "systor-17" => TraceFormat::Systor17,
            "tencent" | "tencent-cbs" => TraceFormat::Tencent,
            "fiu" | "srcmap" | "iodedup" => TraceFormat::Fiu,
            "blkparse" | "blktrace" => TraceFormat::Blkparse,
            "generic" => TraceFormat::Generic,
            _ => {
                let names: Vec<&str> = TraceFormat::ALL.iter().map(|f| f.name()).collect();
                return Err(format!("unknown trace format {s:?} (known: {})", names.join(", ")));
            }
        };
        Ok(f)
    }
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
        }
        assert!("nope".parse::<TraceFormat>().is_err());
    }

    #[test]
    fn request_is_small() {
        assert!(std::mem::size_of::<IoRequest>() <= 32);
    }
}
