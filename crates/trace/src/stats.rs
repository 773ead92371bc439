//! Trace statistics (`lamina trace stats`): counts, read share, mean sizes, span,
//! footprint in distinct 4 KiB blocks, devices and sequential share.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::{IoOp, IoRequest};

/// Block size of the footprint count.
pub const FOOTPRINT_BLOCK_BYTES: u64 = 4096;
/// Blocks per footprint bitmap chunk (16 MiB of address space per chunk).
const CHUNK_BLOCKS: u64 = 4096;

/// Statistics of a request stream.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceStats {
    /// Requests.
    pub requests: u64,
    /// Reads.
    pub reads: u64,
    /// Writes.
    pub writes: u64,
    /// Trims.
    pub trims: u64,
    /// Reads as a percentage of requests.
    pub read_percent: f64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes trimmed.
    pub trim_bytes: u64,
    /// Mean read size in KiB.
    pub avg_read_kib: f64,
    /// Mean write size in KiB.
    pub avg_write_kib: f64,
    /// First arrival (ns).
    pub first_arrival_ns: u64,
    /// Last arrival (ns).
    pub last_arrival_ns: u64,
    /// `last - first` arrival (ns).
    pub span_ns: u64,
    /// Distinct 4 KiB blocks touched (per device address space).
    pub footprint_blocks: u64,
    /// Footprint in bytes (`footprint_blocks * 4096`).
    pub footprint_bytes: u64,
    /// Distinct device ids, ascending.
    pub devices: Vec<u32>,
    /// Requests starting exactly where the previous request on the same device ended.
    pub sequential: u64,
    /// `sequential / requests` as a percentage.
    pub sequential_percent: f64,
}

/// Accumulates [`TraceStats`]; memory grows with the footprint (one bit per 4 KiB
/// block touched, in 16 MiB chunks), not with the request count.
#[derive(Default)]
pub struct StatsAccumulator {
    requests: u64,
    counts: [u64; 3],
    bytes: [u64; 3],
    first: Option<u64>,
    last: u64,
    footprint: u64,
    chunks: FxHashMap<(u32, u64), Box<[u64; (CHUNK_BLOCKS / 64) as usize]>>,
    devices: BTreeSet<u32>,
    last_end: FxHashMap<u32, u64>,
    sequential: u64,
}

impl StatsAccumulator {
    /// An empty accumulator.
    pub fn new() -> StatsAccumulator {
        StatsAccumulator::default()
    }

    /// Add one request.
    pub fn add(&mut self, r: &IoRequest) {
        self.requests += 1;
        let k = match r.op {
            IoOp::Read => 0,
            IoOp::Write => 1,
            IoOp::Trim => 2,
        };
        self.counts[k] += 1;
        self.bytes[k] += r.size_bytes;
        let t = r.arrival.as_ns();
        self.first.get_or_insert(t);
        self.last = self.last.max(t);
        self.devices.insert(r.device);
        let end = r.offset_bytes.saturating_add(r.size_bytes);
        if self.last_end.insert(r.device, end) == Some(r.offset_bytes) {
            self.sequential += 1;
        }
        let first_block = r.offset_bytes / FOOTPRINT_BLOCK_BYTES;
        let last_block = (end - 1) / FOOTPRINT_BLOCK_BYTES;
        for b in first_block..=last_block {
            let chunk = self.chunks.entry((r.device, b / CHUNK_BLOCKS)).or_insert_with(|| Box::new([0; 64]));
            let i = (b % CHUNK_BLOCKS) as usize;
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            if chunk[w] & bit == 0 {
                chunk[w] |= bit;
                self.footprint += 1;
            }
        }
    }

    /// The statistics so far.
    pub fn finish(&self) -> TraceStats {
        let pct = |a: u64, b: u64| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
        let kib = |bytes: u64, n: u64| if n == 0 { 0.0 } else { bytes as f64 / n as f64 / 1024.0 };
        let first = self.first.unwrap_or(0);
        TraceStats {
            requests: self.requests,
            reads: self.counts[0],
            writes: self.counts[1],
            trims: self.counts[2],
            read_percent: pct(self.counts[0], self.requests),
            read_bytes: self.bytes[0],
            write_bytes: self.bytes[1],
            trim_bytes: self.bytes[2],
            avg_read_kib: kib(self.bytes[0], self.counts[0]),
            avg_write_kib: kib(self.bytes[1], self.counts[1]),
            first_arrival_ns: first,
            last_arrival_ns: self.last,
            span_ns: self.last - first,
            footprint_blocks: self.footprint,
            footprint_bytes: self.footprint * FOOTPRINT_BLOCK_BYTES,
            devices: self.devices.iter().copied().collect(),
            sequential: self.sequential,
            sequential_percent: pct(self.sequential, self.requests),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TraceTime;

    fn r(t: u64, dev: u32, off: u64, size: u64, op: IoOp) -> IoRequest {
        IoRequest { arrival: TraceTime(t), device: dev, offset_bytes: off, size_bytes: size, op }
    }

    #[test]
    fn hand_computed_example() {
        let mut a = StatsAccumulator::new();
        a.add(&r(10, 0, 0, 8192, IoOp::Read)); // blocks 0,1
        a.add(&r(20, 0, 8192, 4096, IoOp::Write)); // block 2, sequential
        a.add(&r(30, 1, 0, 512, IoOp::Write)); // dev 1 block 0
        a.add(&r(40, 0, 4000, 200, IoOp::Read)); // block 0 (again)
        a.add(&r(50, 0, 4200, 100, IoOp::Read)); // block 1 (again), sequential
        let s = a.finish();
        assert_eq!((s.requests, s.reads, s.writes), (5, 3, 2));
        assert_eq!(s.read_percent, 60.0);
        assert_eq!(s.footprint_blocks, 4);
        assert_eq!(s.devices, vec![0, 1]);
        assert_eq!(s.sequential, 2);
        assert_eq!(s.span_ns, 40);
        assert_eq!(s.avg_write_kib, (4096.0 + 512.0) / 2.0 / 1024.0);
    }
}
