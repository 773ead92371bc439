//! Traces: the swarm's random workload model ([`Workload`]), the fuzzer's raw operation
//! list ([`OpKnob`]), and the one conversion both go through ([`requests`]).

use arbitrary::Arbitrary;
use lamina_engine::trace::{IoOp, IoRequest};
use rand_core::Rng;
use rand_xoshiro::Xoshiro256StarStar;

/// One host request before it is fitted to the device: a gap after the previous arrival,
/// an operation and a byte range that [`requests`] folds into the logical capacity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceOp {
    /// Time since the previous request's arrival, ns.
    pub gap_ns: u64,
    /// Operation.
    pub op: IoOp,
    /// Byte offset (folded modulo the capacity).
    pub offset: u64,
    /// Length in bytes (raised to 1, cut at the end of the capacity).
    pub len: u64,
}

/// The trace the engine replays: arrivals are the running sum of gaps (so never
/// decreasing), every range lies inside `[0, capacity)` and is at least one byte long.
pub fn requests(ops: &[TraceOp], capacity: u64) -> Vec<IoRequest> {
    assert!(capacity > 0);
    let mut t = 0u64;
    ops.iter()
        .map(|o| {
            t = t.saturating_add(o.gap_ns);
            let offset = o.offset % capacity;
            let size_bytes = o.len.clamp(1, capacity - offset);
            IoRequest {
                arrival: lamina_engine::trace::TraceTime(t),
                device: 0,
                offset_bytes: offset,
                size_bytes,
                op: o.op,
            }
        })
        .collect()
}

/// A raw operation as the fuzzer produces it.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct OpKnob {
    gap: u16,
    gap_shift: u8,
    op: u8,
    offset: u64,
    len: u16,
    len_shift: u8,
}

impl OpKnob {
    /// The operation: gaps from 0 to ~2 s, lengths from 1 byte to ~64 MiB, reads and
    /// writes each five times as likely as trims.
    pub fn decode(&self) -> TraceOp {
        let op = match self.op % 11 {
            0..=4 => IoOp::Read,
            5..=9 => IoOp::Write,
            _ => IoOp::Trim,
        };
        TraceOp {
            gap_ns: u64::from(self.gap) << (self.gap_shift % 16),
            op,
            offset: self.offset,
            len: u64::from(self.len) << (self.len_shift % 11),
        }
    }
}

/// Uniform draw in `0..n` (n > 0) by multiply-shift: unbiased enough for a test
/// generator and free of divisions.
pub fn below(rng: &mut Xoshiro256StarStar, n: u64) -> u64 {
    assert!(n > 0);
    ((u128::from(rng.next_u64()) * u128::from(n)) >> 64) as u64
}

/// Uniform draw in `lo..=hi`.
pub fn between(rng: &mut Xoshiro256StarStar, lo: u64, hi: u64) -> u64 {
    lo + below(rng, hi - lo + 1)
}

/// True with probability `percent` / 100.
pub fn chance(rng: &mut Xoshiro256StarStar, percent: u64) -> bool {
    below(rng, 100) < percent
}

/// How requests arrive.
#[derive(Clone, Copy, Debug)]
pub enum Arrival {
    /// Gaps uniform in `[lo, hi]` ns: from idle (ms apart) to heavy overload (0–2 us).
    Uniform(u64, u64),
    /// Bursts of `len` back-to-back requests separated by idle gaps of `idle` ns.
    Bursts { len: u64, idle: u64 },
    /// Coarse timestamps: groups of up to `group` requests share one arrival instant.
    Coarse { group: u64, step: u64 },
}

/// The swarm's workload model, drawn per seed (each feature on or off at random, in
/// swarm-testing style, so rare interactions are not averaged away).
#[derive(Clone, Debug)]
pub struct Workload {
    /// Requests in the trace.
    pub requests: u64,
    /// Arrival process.
    pub arrival: Arrival,
    /// Weights of read, write and trim.
    pub mix: [u64; 3],
    /// Percent of requests shorter than a page.
    pub sub_page_percent: u64,
    /// Largest request in pages.
    pub max_pages: u64,
    /// Alignment of offsets and lengths in bytes (page size, 512 or 1).
    pub align: u64,
    /// Bytes of the logical space the trace touches (from the start).
    pub span: u64,
    /// Hot spot: (bytes, percent of requests that hit it).
    pub hot: Option<(u64, u64)>,
    /// Percent of requests that continue where the previous one ended.
    pub sequential_percent: u64,
}

impl Workload {
    /// Draw a workload for a device of `capacity` bytes and `page` bytes per page.
    pub fn draw(rng: &mut Xoshiro256StarStar, capacity: u64, page: u64) -> Workload {
        let arrival = match below(rng, 6) {
            0 => Arrival::Uniform(500_000, 20_000_000), // idle: far slower than the device
            1 => Arrival::Uniform(20_000, 1_000_000),   // moderate
            2 => Arrival::Uniform(0, 2_000),            // heavy overload
            3 => Arrival::Uniform(0, between(rng, 1, 200_000)), // anything in between
            4 => Arrival::Bursts { len: between(rng, 1, 64), idle: between(rng, 100_000, 50_000_000) },
            _ => Arrival::Coarse { group: between(rng, 2, 200), step: between(rng, 1_000, 1_000_000_000) },
        };
        let trims = if chance(rng, 50) { between(rng, 1, 20) } else { 0 };
        let span_pages = (capacity / page).max(1);
        let span = match below(rng, 3) {
            0 => capacity,
            1 => between(rng, 1, span_pages) * page,
            _ => between(rng, 1, span_pages.min(64)) * page,
        };
        Workload {
            requests: between(rng, 20, 1_500 * u64::from(super::scale())),
            arrival,
            mix: [between(rng, 0, 100), between(rng, 1, 100), trims],
            sub_page_percent: [0, 10, 50, 100][below(rng, 4) as usize],
            max_pages: [1, 4, 16, 64][below(rng, 4) as usize],
            align: [page, 512, 1][below(rng, 3) as usize],
            span,
            hot: chance(rng, 50).then(|| (between(rng, 1, 16) * page, between(rng, 10, 95))),
            sequential_percent: [0, 30, 90][below(rng, 3) as usize],
        }
    }

    /// Generate the operations.
    pub fn ops(&self, rng: &mut Xoshiro256StarStar, page: u64) -> Vec<TraceOp> {
        let mut out = Vec::with_capacity(self.requests as usize);
        let mut next_seq = 0u64;
        let total: u64 = self.mix.iter().sum();
        for i in 0..self.requests {
            let gap_ns = match self.arrival {
                Arrival::Uniform(lo, hi) => between(rng, lo, hi),
                Arrival::Bursts { len, idle } => {
                    if i % len == 0 {
                        idle
                    } else {
                        0
                    }
                }
                Arrival::Coarse { group, step } => {
                    if chance(rng, 100 / group) {
                        step
                    } else {
                        0
                    }
                }
            };
            let pick = below(rng, total);
            let op = if pick < self.mix[0] {
                IoOp::Read
            } else if pick < self.mix[0] + self.mix[1] {
                IoOp::Write
            } else {
                IoOp::Trim
            };
            let len = if chance(rng, self.sub_page_percent) {
                between(rng, 1, page)
            } else {
                between(rng, 1, self.max_pages) * page
            };
            let len = len.div_ceil(self.align) * self.align;
            let offset = if chance(rng, self.sequential_percent) {
                next_seq
            } else {
                match self.hot {
                    Some((bytes, percent)) if chance(rng, percent) => below(rng, bytes),
                    _ => below(rng, self.span),
                }
            };
            let offset = offset / self.align * self.align % self.span;
            next_seq = offset + len;
            out.push(TraceOp { gap_ns, op, offset, len });
        }
        out
    }
}

/// Counts of a trace, for the failure printout and the completion checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceCounts {
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trim requests.
    pub trims: u64,
    /// Logical pages touched by reads (one per page of each request).
    pub read_pages: u64,
    /// Logical pages touched by writes.
    pub write_pages: u64,
    /// Write pages not covered whole (read-modify-write candidates).
    pub partial_write_pages: u64,
    /// Bytes read and written.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// First and last arrival, ns.
    pub first_arrival: u64,
    /// Last arrival, ns.
    pub last_arrival: u64,
}

impl TraceCounts {
    /// Count `reqs` for pages of `page` bytes.
    pub fn of(reqs: &[IoRequest], page: u64) -> TraceCounts {
        let mut c = TraceCounts {
            first_arrival: reqs.first().map_or(0, |r| r.arrival.0),
            last_arrival: reqs.last().map_or(0, |r| r.arrival.0),
            ..TraceCounts::default()
        };
        for r in reqs {
            let first = r.offset_bytes / page;
            let end = r.offset_bytes + r.size_bytes;
            let pages = (end - 1) / page - first + 1;
            let partial = u64::from(r.offset_bytes % page != 0) + u64::from(end % page != 0);
            match r.op {
                IoOp::Read => {
                    c.reads += 1;
                    c.read_pages += pages;
                    c.read_bytes += r.size_bytes;
                }
                IoOp::Write => {
                    c.writes += 1;
                    c.write_pages += pages;
                    c.partial_write_pages += partial.min(pages);
                    c.write_bytes += r.size_bytes;
                }
                IoOp::Trim => c.trims += 1,
            }
        }
        c
    }
}
