//! The deterministic discrete-event replay loop.
//!
//! One [`Simulation`] owns the clock, the event queue, the NAND [`Device`], the FTL, the
//! policies, the write buffer and the statistics. Trace arrivals stream from an iterator
//! and are merged with the event queue (never loaded whole). All state changes happen
//! in event order; ties are broken by insertion sequence, so a run is a pure function of
//! (config, trace, seed).
//!
//! Flow of a host request: arrival → (host queue if the device queue is full) → split
//! into logical-page sub-requests → buffer / per-die transaction queues → a free die's
//! arbiter picks a queue → the FTL translates (reads) or allocates (writes) at that
//! moment → the NAND model reserves bus and die and returns the phase times → an
//! `OpDone` event completes the transactions → the request completes when its last
//! sub-request does.

use std::collections::VecDeque;

use lamina_ftl::{Ftl, GcStep, Lpn};
use lamina_nand_model::{
    ChannelId, Command, Device, DieId, Geometry, NandError, Nanos, PlaneId, Ppa, SimTime, Timing,
};
use lamina_sched::{Arbiter, Class, DeviceView, GcMode, PendingOp, Placement, QueueHeads};

use crate::buffer::{self, FlushDone, Put, WriteBuffer};
use crate::config::{HostMode, SimConfig};
use crate::queue::EventQueue;
use crate::slab::Slab;
use crate::stats::RequestStats;
use crate::table::LpnTable;
use crate::trace::{IoOp, IoRequest};

const NIL: u32 = u32::MAX;

/// Events of the simulation (a closed set).
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A flash operation finished (stale if the op's `done` moved because it was suspended).
    OpDone { op: u32 },
    /// `pages` pages of a request served by DRAM (buffered writes, buffer read hits,
    /// reads of queued writes' data) finish their DRAM access.
    DramDone { req: u32, pages: u32 },
    /// Idle-flush check, valid only if no host activity happened since it was scheduled.
    IdleFlush { epoch: u32 },
    /// A channel frees: retry binding undecided writes.
    Recheck,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TxnKind {
    /// Host read of one page (or part of it).
    Read,
    /// The read half of a read-modify-write; its write transaction follows.
    RmwRead,
    /// Host write going straight to flash (no buffer).
    Write,
    /// Buffer flush of one page.
    Flush,
}

#[derive(Clone, Copy, Debug)]
struct Txn {
    kind: TxnKind,
    lpn: u64,
    /// Owning request (NIL for flushes).
    req: u32,
    die: DieId,
    /// Target plane (writes).
    plane: PlaneId,
    /// Byte range within the page (reads).
    offset: u32,
    len: u32,
    /// Partial page (writes): needs read-modify-write if the page is already mapped.
    partial: bool,
    /// For a read-modify-write read: the write transaction waiting for it.
    link: u32,
    seq: u64,
}

#[derive(Clone, Copy, Debug)]
struct Request {
    arrival: SimTime,
    op: IoOp,
    bytes: u64,
    /// First logical page (for the latency log).
    lpn: u64,
    remaining: u32,
    /// Latest time a sub-request of this request started service.
    last_start: SimTime,
}

/// A flash operation in flight: the host transactions it serves (none for a GC step).
#[derive(Clone, Copy, Debug)]
struct Op {
    die: DieId,
    done: SimTime,
    txns: [u32; 2],
    ntxns: u8,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum PeKind {
    #[default]
    Program,
    Erase,
}

#[derive(Default)]
struct DieState {
    reads: VecDeque<u32>,
    writes: VecDeque<u32>,
    /// Planes of this die with a GC job in progress, FCFS, with the seq of the job.
    gc: VecDeque<(PlaneId, u64)>,
    /// In-flight ops on this die.
    inflight: u32,
    /// Host writes bound to this die that wait for their read-modify-write read (which
    /// may run on another die), FCFS. They count as this die's pending work.
    parked: Vec<u32>,
    /// The program/erase op currently running (for suspension bookkeeping).
    pe_op: u32,
    /// Whether `pe_op` is an erase (else a program).
    pe_kind: PeKind,
    writes_done: u64,
    /// The head write found its plane out of free pages: writes wait until an operation
    /// of this die completes (GC frees space) instead of being retried at once.
    write_stalled: bool,
}

/// A host read returned data that is not the latest write: the run aborts.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "verify: read of LPN {lpn} at {at} returned tag {got:#x} but the latest write of that page has tag {expected:#x} (request arrived at {arrival})"
)]
pub struct VerifyError {
    /// The logical page.
    pub lpn: u64,
    /// When the read was issued.
    pub at: SimTime,
    /// When the request arrived.
    pub arrival: SimTime,
    /// Tag found on flash (`u64::MAX` if none).
    pub got: u64,
    /// Tag of the latest write.
    pub expected: u64,
}

/// Errors that abort a run.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A trace error (names file, line and field).
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),
    /// A lost or stale read in verify mode.
    #[error(transparent)]
    Verify(#[from] VerifyError),
    /// The device refused an operation: a bug in an FTL or policy (flash physics broken).
    #[error("flash physics violated at {at}: {source}")]
    Nand {
        /// Simulated time.
        at: SimTime,
        /// The model's error.
        source: NandError,
    },
    /// The FTL failed (e.g. out of space).
    #[error("FTL error at {at}: {source}")]
    Ftl {
        /// Simulated time.
        at: SimTime,
        /// The FTL's error.
        source: lamina_ftl::FtlError,
    },
}

/// Counters of the flash side.
#[derive(Default, Clone, Copy, Debug)]
pub struct FlashCounters {
    /// Host pages programmed (direct writes and flushes).
    pub host_programs: u64,
    /// Pages programmed by GC.
    pub gc_programs: u64,
    /// Pages read for the host.
    pub host_reads: u64,
    /// Pages read by GC (not counting copyback).
    pub gc_reads: u64,
    /// Read-modify-write reads.
    pub rmw_reads: u64,
    /// GC jobs started.
    pub gc_jobs: u64,
    /// Pages moved by GC.
    pub gc_moves: u64,
    /// Block erases.
    pub erases: u64,
    /// Partial-block erases.
    pub partial_erases: u64,
    /// Reads of never-written (or trimmed) pages completed without flash access.
    pub unwritten_reads: u64,
    /// Reads re-queued because GC or a write moved their page to another die.
    pub read_redirects: u64,
    /// Reads of pages whose only write is still queued (not yet programmed, not in the
    /// write buffer): served from the queued write's data in controller DRAM.
    pub pending_write_reads: u64,
    /// Host writes moved off a plane whose pages all hold valid data (nothing for GC to
    /// reclaim) to the next plane with free blocks.
    pub full_plane_redirects: u64,
}

/// How one page of a host request is served when it is admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Served {
    /// Complete now without any device work (unwritten page, trim).
    Instant,
    /// From controller DRAM: this many bytes move over the DRAM bus.
    Dram(u32),
    /// Queued for flash or for buffer space; completes later.
    Queued,
}

/// The simulation state. Build with [`crate::SimulationBuilder`].
pub struct Simulation {
    pub(crate) cfg: SimConfig,
    pub(crate) geo: Geometry,
    pub(crate) device: Device,
    pub(crate) ftl: Box<dyn Ftl>,
    placement: Box<dyn Placement>,
    arbiter: Box<dyn Arbiter>,
    gc_mode: GcMode,
    events: EventQueue<Event>,
    pub(crate) now: SimTime,
    reqs: Slab<Request>,
    txns: Slab<Txn>,
    ops: Slab<Op>,
    dies: Vec<DieState>,
    buffer: Option<WriteBuffer>,
    flushes: Vec<buffer::Flush>,
    /// When the controller DRAM finishes its current transfers.
    dram_free_at: SimTime,
    /// Host writes queued for flash without a buffer (not yet programmed), per LPN: a
    /// read that finds its page unmapped but here is served from the queued write's
    /// data. Small (queued writes only), so it stays in cache; a per-LPN bit set over
    /// the footprint cost 5 % of replay throughput in cache misses. Lookups only; never
    /// iterated.
    queued_writes: rustc_hash::FxHashMap<u64, u32>,
    host_queue: VecDeque<IoRequest>,
    /// Host writes and flushes whose placement the policy deferred, FCFS.
    undecided: VecDeque<Txn>,
    /// Time of the pending `Recheck` event (ZERO if none).
    recheck_at: SimTime,
    admitted: u32,
    seq: u64,
    epoch: u32,
    /// Latest write version per LPN (verify mode only).
    versions: Option<LpnTable<u32>>,
    pub(crate) stats: RequestStats,
    pub(crate) flash: FlashCounters,
    pub(crate) events_processed: u64,
    pub(crate) peak_outstanding: u32,
    /// When the last flash operation completed (utilisation counts busy time up to the
    /// later of this and the last request completion).
    pub(crate) last_op_done: SimTime,
    /// What preconditioning did (for the report).
    pub(crate) preconditioned: Option<crate::report::PreconditionSummary>,
    page_size: u32,
    logical_pages: u64,
    /// Per-request CSV log (`--latency-log`), if any.
    pub(crate) latency_log: Option<crate::latency_log::LatencyLog>,
}

/// Tag written with a page in verify mode: LPN in the high 32 bits, version in the low.
#[inline]
pub(crate) fn tag_of(lpn: u64, version: u32) -> u64 {
    (lpn << 32) | version as u64
}

/// The engine's state as policies see it (see [`DeviceView`]).
struct View<'a> {
    geo: &'a Geometry,
    device: &'a Device,
    ftl: &'a dyn Ftl,
    dies: &'a [DieState],
    txns: &'a Slab<Txn>,
    page_size: u32,
    now: SimTime,
}

impl DeviceView for View<'_> {
    fn geometry(&self) -> &Geometry {
        self.geo
    }
    fn timing(&self) -> &Timing {
        self.device.spec().timing()
    }
    fn now(&self) -> SimTime {
        self.now
    }
    fn die_idle(&self, die: DieId) -> bool {
        let d = &self.dies[die.idx()];
        d.inflight == 0 && d.parked.is_empty() && self.device.is_die_idle(die, self.now)
    }
    fn channel_idle(&self, channel: ChannelId) -> bool {
        self.device.is_channel_idle(channel, self.now)
    }
    fn die_free_at(&self, die: DieId) -> SimTime {
        self.device.die_free_at(die).max(self.now)
    }
    fn die_queue_len(&self, die: DieId) -> u32 {
        let d = &self.dies[die.idx()];
        (d.reads.len() + d.writes.len() + d.parked.len()) as u32
    }
    fn for_each_pending(&self, die: DieId, f: &mut dyn FnMut(PendingOp)) {
        let d = &self.dies[die.idx()];
        for &t in d.reads.iter().chain(d.writes.iter()).chain(d.parked.iter()) {
            let tx = self.txns.get(t);
            let is_read = matches!(tx.kind, TxnKind::Read | TxnKind::RmwRead);
            let page =
                if is_read { self.ftl.lookup(Lpn(tx.lpn)).map(|p| self.geo.addr(p).page) } else { None };
            let bytes = if tx.kind == TxnKind::Read { tx.len } else { self.page_size };
            f(PendingOp { is_read, bytes, page, plane: tx.plane });
        }
    }
    fn die_gc_active(&self, die: DieId) -> bool {
        !self.dies[die.idx()].gc.is_empty()
    }
    fn die_writes(&self, die: DieId) -> u64 {
        self.dies[die.idx()].writes_done
    }
    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        self.ftl.next_write_page(plane)
    }
}

impl Simulation {
    pub(crate) fn new(
        cfg: SimConfig,
        device: Device,
        ftl: Box<dyn Ftl>,
        placement: Box<dyn Placement>,
        arbiter: Box<dyn Arbiter>,
    ) -> Simulation {
        let geo = device.geometry().clone();
        let logical_pages = ftl.logical_pages();
        let page_size = geo.page_size_bytes();
        let buffer = (cfg.buffer.size_bytes >= page_size as u64).then(|| {
            let cap = (cfg.buffer.size_bytes / page_size as u64).min(u32::MAX as u64 - 1) as u32;
            let wm = (cap as f64 * cfg.buffer.flush_watermark) as u32;
            WriteBuffer::new(cap, logical_pages, wm)
        });
        let versions = cfg.host.verify.then(|| LpnTable::new(logical_pages, 0u32));
        let mut dies = Vec::with_capacity(geo.total_dies() as usize);
        dies.resize_with(geo.total_dies() as usize, || DieState { pe_op: NIL, ..DieState::default() });
        Simulation {
            gc_mode: cfg.sched.gc,
            cfg,
            geo,
            device,
            ftl,
            placement,
            arbiter,
            events: EventQueue::default(),
            now: SimTime::ZERO,
            reqs: Slab::default(),
            txns: Slab::default(),
            ops: Slab::default(),
            dies,
            buffer,
            flushes: Vec::new(),
            dram_free_at: SimTime::ZERO,
            queued_writes: rustc_hash::FxHashMap::default(),
            host_queue: VecDeque::new(),
            undecided: VecDeque::new(),
            recheck_at: SimTime::ZERO,
            admitted: 0,
            seq: 0,
            epoch: 0,
            versions,
            stats: RequestStats::default(),
            flash: FlashCounters::default(),
            events_processed: 0,
            peak_outstanding: 0,
            last_op_done: SimTime::ZERO,
            preconditioned: None,
            page_size,
            logical_pages,
            latency_log: None,
        }
    }

    /// The logical pages the host can address.
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    /// The write buffer, if configured.
    pub(crate) fn buffer(&self) -> Option<&WriteBuffer> {
        self.buffer.as_ref()
    }

    /// Replay `trace` to completion.
    pub fn run<I>(&mut self, trace: I) -> Result<(), RunError>
    where
        I: Iterator<Item = Result<IoRequest, crate::trace::TraceError>>,
    {
        let mut trace = trace.peekable();
        let closed = self.cfg.host.mode == HostMode::Closed;
        loop {
            // Next arrival: in closed loop, requests enter only when a slot is free.
            let next_arrival = if closed {
                if self.admitted < self.cfg.host.closed_loop_depth {
                    match trace.peek() {
                        Some(Ok(_)) => Some(self.now),
                        Some(Err(_)) => return Err(trace.next().unwrap().unwrap_err().into()),
                        None => None,
                    }
                } else {
                    None
                }
            } else {
                match trace.peek() {
                    Some(Ok(r)) => Some(SimTime(r.arrival.as_ns())),
                    Some(Err(_)) => return Err(trace.next().unwrap().unwrap_err().into()),
                    None => None,
                }
            };
            let next_event = self.events.peek_time();
            // Events at the same instant run before arrivals, so completions free slots first.
            let take_event = match (next_event, next_arrival) {
                (Some(e), Some(a)) => e <= a,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_event {
                let (t, ev) = self.events.pop().expect("peeked");
                assert!(t >= self.now, "clock ran backwards: {t} < {}", self.now);
                self.now = t;
                self.events_processed += 1;
                self.handle(ev)?;
            } else {
                let mut r = trace.next().expect("peeked").expect("peeked Ok");
                if closed {
                    r.arrival = crate::trace::TraceTime(self.now.as_ns());
                }
                let arrival = SimTime(r.arrival.as_ns());
                assert!(arrival >= self.now, "trace arrival {arrival} before now {}", self.now);
                self.now = arrival;
                if self.stats.first_arrival.is_none() {
                    self.stats.first_arrival = Some(arrival);
                }
                self.arrive(r)?;
            }
        }
        assert!(self.reqs.is_empty(), "{} requests never completed", self.reqs.len());
        Ok(())
    }

    fn handle(&mut self, ev: Event) -> Result<(), RunError> {
        match ev {
            Event::OpDone { op } => {
                let o = *self.ops.get(op);
                if o.done != self.now {
                    return Ok(()); // stale: the op was suspended and finishes later
                }
                self.op_done(op)
            }
            Event::DramDone { req, pages } => self.finish_sub(req, pages),
            Event::Recheck => {
                if self.recheck_at == self.now {
                    self.recheck_at = SimTime::ZERO;
                }
                self.retry_undecided()
            }
            Event::IdleFlush { epoch } => {
                if epoch == self.epoch && self.reqs.is_empty() {
                    if let Some(b) = self.buffer.as_mut() {
                        b.flush_all(&mut self.flushes);
                    }
                    self.enqueue_flushes()?;
                }
                Ok(())
            }
        }
    }

    fn arrive(&mut self, r: IoRequest) -> Result<(), RunError> {
        self.epoch = self.epoch.wrapping_add(1);
        let depth = self.cfg.host.queue_depth;
        if self.cfg.host.mode == HostMode::Open && depth != 0 && self.admitted >= depth {
            self.host_queue.push_back(r);
            return Ok(());
        }
        self.admit(r)
    }

    fn admit(&mut self, r: IoRequest) -> Result<(), RunError> {
        self.admitted += 1;
        self.peak_outstanding = self.peak_outstanding.max(self.admitted);
        let ps = self.page_size as u64;
        let first = r.offset_bytes / ps;
        let last = (r.offset_bytes + r.size_bytes - 1) / ps;
        let npages = (last - first + 1) as u32;
        let req = self.reqs.insert(Request {
            arrival: SimTime(r.arrival.as_ns()),
            op: r.op,
            bytes: r.size_bytes,
            lpn: self.wrap(first),
            remaining: npages,
            last_start: self.now,
        });
        let (mut instant, mut dram_pages, mut dram_bytes) = (0u32, 0u32, 0u64);
        // Reads look up a batch of pages first: the map loads are independent, so their
        // cache misses overlap instead of serialising behind each page's dispatch.
        const BATCH: usize = 16;
        let mut mapped = [None; BATCH];
        for page in first..=last {
            let start = if page == first { (r.offset_bytes % ps) as u32 } else { 0 };
            let end = if page == last {
                ((r.offset_bytes + r.size_bytes - 1) % ps + 1) as u32
            } else {
                self.page_size
            };
            let lpn = self.wrap(page);
            let slot = ((page - first) % BATCH as u64) as usize;
            if r.op == IoOp::Read && slot == 0 {
                let n = (last - page + 1).min(BATCH as u64);
                for (i, m) in mapped.iter_mut().enumerate().take(n as usize) {
                    *m = self.ftl.lookup(Lpn(self.wrap(page + i as u64)));
                }
            }
            let served = match r.op {
                IoOp::Read => self.sub_read(req, lpn, start, end - start, mapped[slot])?,
                IoOp::Write => self.sub_write(req, lpn, start, end - start)?,
                IoOp::Trim => {
                    if let Some(b) = self.buffer.as_mut() {
                        b.discard(lpn);
                    }
                    if end - start == self.page_size {
                        self.ftl.trim(Lpn(lpn));
                        // The trim supersedes a queued write's data (which still programs
                        // later, as it would on a device).
                        self.queued_writes.remove(&lpn);
                    }
                    Served::Instant
                }
            };
            match served {
                Served::Instant => instant += 1,
                Served::Dram(bytes) => {
                    dram_pages += 1;
                    dram_bytes += bytes as u64;
                }
                Served::Queued => {}
            }
        }
        self.enqueue_flushes()?;
        if dram_pages > 0 {
            // One DRAM access for all DRAM-served pages of this request.
            let done = self.dram_access(req, dram_bytes);
            self.events.push(done, Event::DramDone { req, pages: dram_pages });
        }
        if instant > 0 {
            self.finish_sub(req, instant)?;
        }
        Ok(())
    }

    /// Reserve the controller DRAM for `bytes` on behalf of `req` (FCFS, one transfer at
    /// a time at `buffer.dram_bandwidth_bytes_per_s`); returns when the access
    /// completes (transfer end + `buffer.dram_latency`).
    fn dram_access(&mut self, req: u32, bytes: u64) -> SimTime {
        let start = self.now.max(self.dram_free_at);
        let bw = self.cfg.buffer.dram_bandwidth_bytes_per_s as u128;
        let xfer = Nanos((bytes as u128 * 1_000_000_000).div_ceil(bw) as u64);
        self.dram_free_at = start + xfer;
        let r = self.reqs.get_mut(req);
        if start > r.last_start {
            r.last_start = start;
        }
        start + xfer + self.cfg.buffer.dram_latency
    }

    fn mask_of(&self, offset: u32, len: u32) -> u64 {
        if len == self.page_size {
            return buffer::FULL;
        }
        let unit = self.page_size.div_ceil(64);
        let a = offset / unit;
        let b = (offset + len).div_ceil(unit).min(64);
        let bits = b - a;
        if bits >= 64 { buffer::FULL } else { ((1u64 << bits) - 1) << a }
    }

    /// A logical page number of the trace, inside the logical space (the trace layer
    /// already wraps or rejects addresses beyond capacity; this only guards).
    #[inline]
    fn wrap(&self, lpn: u64) -> u64 {
        if lpn < self.logical_pages { lpn } else { lpn % self.logical_pages }
    }

    /// One page of a read; `mapped` is the FTL's current mapping of `lpn`.
    fn sub_read(
        &mut self,
        req: u32,
        lpn: u64,
        offset: u32,
        len: u32,
        mapped: Option<Ppa>,
    ) -> Result<Served, RunError> {
        let mask = self.mask_of(offset, len);
        if let Some(b) = self.buffer.as_mut()
            && b.read(lpn, mask)
        {
            return Ok(Served::Dram(len));
        }
        let Some(ppa) = mapped else {
            if self.queued_writes.contains_key(&lpn) {
                // Overtook its page's first write, which is still queued: the data is in
                // controller DRAM with that write (issue #8, 0b).
                self.flash.pending_write_reads += 1;
                return Ok(Served::Dram(len));
            }
            self.flash.unwritten_reads += 1;
            return Ok(Served::Instant);
        };
        // Only the die and plane are needed to queue the read (no full address decode).
        let plane = self.geo.plane_of_block(self.geo.block_of(ppa));
        let die = self.geo.die_of_plane(plane);
        self.push_txn(Txn {
            kind: TxnKind::Read,
            lpn,
            req,
            die,
            plane,
            offset,
            len,
            partial: false,
            link: NIL,
            seq: 0,
        })?;
        Ok(Served::Queued)
    }

    fn sub_write(&mut self, req: u32, lpn: u64, offset: u32, len: u32) -> Result<Served, RunError> {
        let mask = self.mask_of(offset, len);
        if let Some(b) = self.buffer.as_mut() {
            return Ok(match b.write(lpn, mask, &mut self.flushes) {
                Put::Stored => Served::Dram(len),
                Put::Evicted { victim } => {
                    // The page is in DRAM, but it took the place of a page whose program
                    // is in flight: this write completes when that program does.
                    let ready = self.dram_access(req, len as u64);
                    self.buffer.as_mut().expect("buffer").set_waiter(victim, req, ready);
                    Served::Queued
                }
            });
        }
        *self.queued_writes.entry(lpn).or_insert(0) += 1;
        self.place_and_push(Txn {
            kind: TxnKind::Write,
            lpn,
            req,
            die: DieId(0),
            plane: PlaneId(0),
            offset,
            len,
            partial: len != self.page_size,
            link: NIL,
            seq: 0,
        })?;
        Ok(Served::Queued)
    }

    /// Ask the placement policy for a plane; `None` = undecided (deferred).
    fn place(&mut self, lpn: u64) -> Option<PlaneId> {
        let static_plane = self.ftl.static_plane(Lpn(lpn));
        let view = View {
            geo: &self.geo,
            device: &self.device,
            ftl: self.ftl.as_ref(),
            dies: &self.dies,
            txns: &self.txns,
            page_size: self.page_size,
            now: self.now,
        };
        let plane = self.placement.place_write(Lpn(lpn), static_plane, &view)?;
        assert!(plane.0 < self.geo.total_planes(), "placement returned plane {} out of range", plane.0);
        Some(plane)
    }

    /// Queue a host write or flush at the plane the placement policy picks, or in the
    /// undecided FCFS queue if it defers (or if older writes are still undecided).
    fn place_and_push(&mut self, mut t: Txn) -> Result<(), RunError> {
        if self.undecided.is_empty()
            && let Some(plane) = self.place(t.lpn)
        {
            t.plane = plane;
            t.die = self.geo.die_of_plane(plane);
            return self.push_txn(t);
        }
        self.undecided.push_back(t);
        self.schedule_recheck();
        Ok(())
    }

    /// Bind undecided writes, oldest first, while the policy accepts them.
    fn retry_undecided(&mut self) -> Result<(), RunError> {
        while let Some(&t) = self.undecided.front() {
            let Some(plane) = self.place(t.lpn) else { break };
            self.undecided.pop_front();
            self.push_txn(Txn { plane, die: self.geo.die_of_plane(plane), ..t })?;
        }
        self.schedule_recheck();
        Ok(())
    }

    /// With writes undecided, wake up when the next busy channel frees (die idleness
    /// is already signalled by operation completions).
    fn schedule_recheck(&mut self) {
        if self.undecided.is_empty() {
            return;
        }
        let mut next = SimTime::MAX;
        for c in 0..self.geo.channels() {
            let t = self.device.channel_free_at(ChannelId(c), self.now);
            if t > self.now && t < next {
                next = t;
            }
        }
        if next != SimTime::MAX && (self.recheck_at <= self.now || next < self.recheck_at) {
            self.recheck_at = next;
            self.events.push(next, Event::Recheck);
        }
    }

    #[inline]
    fn bump_version(&mut self, lpn: u64) {
        if let Some(v) = self.versions.as_mut() {
            let e = v.get_mut(lpn);
            *e = e.wrapping_add(1);
        }
    }

    fn enqueue_flushes(&mut self) -> Result<(), RunError> {
        // In the order the buffer asked (least recently used first).
        let mut flushes = std::mem::take(&mut self.flushes);
        for f in flushes.drain(..) {
            self.place_and_push(Txn {
                kind: TxnKind::Flush,
                lpn: f.lpn,
                req: NIL,
                die: DieId(0),
                plane: PlaneId(0),
                offset: 0,
                len: self.page_size,
                partial: f.mask != buffer::FULL,
                // A flush's link is its buffer slot (handed back at completion).
                link: f.slot,
                seq: 0,
            })?;
        }
        self.flushes = flushes;
        Ok(())
    }

    fn push_txn(&mut self, mut t: Txn) -> Result<(), RunError> {
        t.seq = self.seq;
        self.seq += 1;
        let die = t.die;
        let is_read = matches!(t.kind, TxnKind::Read | TxnKind::RmwRead);
        let id = self.txns.insert(t);
        let d = &mut self.dies[die.idx()];
        if is_read {
            d.reads.push_back(id)
        } else {
            d.writes.push_back(id)
        }
        self.dispatch(die, is_read)
    }

    /// Serve the die's queues while it is free (or, for a new read, while a program or
    /// erase it could suspend is running).
    fn dispatch(&mut self, die: DieId, read_arrived: bool) -> Result<(), RunError> {
        loop {
            let d = &self.dies[die.idx()];
            let free = d.inflight == 0;
            let may_suspend = !free && read_arrived && d.pe_op != NIL && self.suspendable(d.pe_kind);
            if !free && !may_suspend {
                return Ok(());
            }
            let heads = QueueHeads {
                read: d.reads.front().map(|&t| self.txns.get(t).seq),
                write: if may_suspend || d.write_stalled {
                    None
                } else {
                    d.writes.front().map(|&t| self.txns.get(t).seq)
                },
                gc: if may_suspend { None } else { d.gc.front().map(|&(_, s)| s) },
            };
            // The arbiter only decides between non-empty queues: with one, it is that one.
            let class = match (heads.read.is_some(), heads.write.is_some(), heads.gc.is_some()) {
                (false, false, false) => return Ok(()),
                (true, false, false) => Class::Read,
                (false, true, false) => Class::Write,
                (false, false, true) => Class::Gc,
                _ => match self.arbiter.pick(&heads, self.gc_mode) {
                    Some(c) => c,
                    None => return Ok(()),
                },
            };
            let issued = match class {
                Class::Read => {
                    let t = self.dies[die.idx()].reads.pop_front().expect("head");
                    self.issue_read(t)?
                }
                Class::Write => {
                    let t = self.dies[die.idx()].writes.pop_front().expect("head");
                    self.issue_write(t)?
                }
                Class::Gc => self.issue_gc(die)?,
            };
            if may_suspend || !issued {
                // A suspending read is one op; otherwise loop only if nothing was issued.
                if issued {
                    return Ok(());
                }
                continue;
            }
            return Ok(());
        }
    }

    fn new_op(&mut self, die: DieId, done: SimTime, txns: [u32; 2], ntxns: u8, pe: Option<PeKind>) -> u32 {
        let op = self.ops.insert(Op { die, done, txns, ntxns });
        let d = &mut self.dies[die.idx()];
        d.inflight += 1;
        if let Some(k) = pe {
            d.pe_op = op;
            d.pe_kind = k;
        }
        self.events.push(done, Event::OpDone { op });
        op
    }

    /// True if the device's rules let a read suspend an op of this kind.
    fn suspendable(&self, k: PeKind) -> bool {
        match self.device.spec().suspension() {
            Some(r) => match k {
                PeKind::Program => r.program,
                PeKind::Erase => r.erase,
            },
            None => false,
        }
    }

    fn nand(&self, e: NandError) -> RunError {
        RunError::Nand { at: self.now, source: e }
    }

    fn note_suspension(&mut self, timing: &lamina_nand_model::OpTiming) {
        if let Some(s) = timing.suspended {
            let pe = self.dies[s.die.idx()].pe_op;
            assert!(pe != NIL, "device suspended an op the engine does not know");
            let op = self.ops.get_mut(pe);
            assert_eq!(op.done, s.old_done, "suspended op completion mismatch");
            op.done = s.new_done;
            self.events.push(s.new_done, Event::OpDone { op: pe });
        }
    }

    /// Issue a read transaction. Returns false if it was redirected to another die.
    fn issue_read(&mut self, t: u32) -> Result<bool, RunError> {
        let tx = *self.txns.get(t);
        let Some(ppa) = self.ftl.lookup(Lpn(tx.lpn)) else {
            // Trimmed while queued. A host read returns zeros; a read-modify-write read
            // has no old data to merge, so its write proceeds alone (counting it as an
            // unwritten host read double-counted a read page: swarm seed 247).
            self.txns.remove(t);
            if tx.kind == TxnKind::Read {
                self.flash.unwritten_reads += 1;
            }
            self.after_txn(tx)?;
            return Ok(false);
        };
        let a = self.geo.addr(ppa);
        let die = self.geo.die_id(a);
        if die != tx.die {
            // A write or GC moved the page to another die while the read was queued.
            self.flash.read_redirects += 1;
            let txm = self.txns.get_mut(t);
            txm.die = die;
            self.dies[die.idx()].reads.push_front(t);
            self.dispatch(die, true)?;
            return Ok(false);
        }
        if tx.kind == TxnKind::Read {
            self.verify_read(tx.lpn, ppa, tx.req)?;
        }
        let (off, len) = if tx.kind == TxnKind::RmwRead { (0, self.page_size) } else { (tx.offset, tx.len) };
        let pages = [a];
        let timing = self
            .device
            .issue(self.now, &Command::Read { pages: &pages, offset_bytes: off, len_bytes: len })
            .map_err(|e| self.nand(e))?;
        self.note_suspension(&timing);
        if tx.kind == TxnKind::RmwRead {
            self.flash.rmw_reads += 1;
        } else {
            self.flash.host_reads += 1;
        }
        self.mark_start(tx.req);
        self.new_op(die, timing.done, [t, NIL], 1, None);
        Ok(true)
    }

    fn verify_read(&self, lpn: u64, ppa: Ppa, req: u32) -> Result<(), VerifyError> {
        if let Some(v) = &self.versions {
            let expected = tag_of(lpn, v.get(lpn));
            let got = self.device.tag(ppa).unwrap_or(u64::MAX);
            if got != expected {
                return Err(VerifyError {
                    lpn,
                    at: self.now,
                    arrival: self.reqs.get(req).arrival,
                    got,
                    expected,
                });
            }
        }
        Ok(())
    }

    #[inline]
    fn mark_start(&mut self, req: u32) {
        if req != NIL {
            let r = self.reqs.get_mut(req);
            if self.now > r.last_start {
                r.last_start = self.now;
            }
        }
    }

    fn issue_write(&mut self, t: u32) -> Result<bool, RunError> {
        let tx = *self.txns.get(t);
        if tx.partial && self.cfg.host.read_modify_write && tx.kind != TxnKind::RmwRead {
            if let Some(old) = self.ftl.lookup(Lpn(tx.lpn)) {
                // Read the old page first (on its own die); the write is re-queued when
                // the read completes. Mark the write as no longer partial.
                let a = self.geo.addr(old);
                let die = self.geo.die_id(a);
                self.txns.get_mut(t).partial = false;
                let rmw = Txn { kind: TxnKind::RmwRead, link: t, die, ..tx };
                let rid = self.txns.insert(Txn { seq: self.seq, ..rmw });
                self.seq += 1;
                self.dies[tx.die.idx()].parked.push(t);
                self.dies[die.idx()].reads.push_back(rid);
                if die != tx.die {
                    self.dispatch(die, true)?;
                    return Ok(false);
                }
                return Ok(false);
            }
        }
        let ppa = match self.ftl.write(Lpn(tx.lpn), tx.plane) {
            Ok(ppa) => ppa,
            Err(e @ lamina_ftl::FtlError::NoFreePage { plane }) => {
                return self.write_to_full_plane(t, plane, e);
            }
        };
        let a = self.geo.addr(ppa);
        debug_assert_eq!(self.geo.plane_id(a), tx.plane);
        if tx.kind == TxnKind::Write
            && let Some(n) = self.queued_writes.get_mut(&tx.lpn)
        {
            // Mapped from now on: reads find the page through the FTL.
            *n -= 1;
            if *n == 0 {
                self.queued_writes.remove(&tx.lpn);
            }
        }
        // Versions count flash programs of host data (direct writes and buffer flushes):
        // a flash read must return the latest programmed version; newer data still in the
        // DRAM buffer is served from there.
        self.bump_version(tx.lpn);
        let tag = match &self.versions {
            Some(v) => tag_of(tx.lpn, v.get(tx.lpn)),
            None => 0,
        };
        let pages = [a];
        let tags = [tag];
        let timing = self
            .device
            .issue(self.now, &Command::Program { pages: &pages, tags: &tags })
            .map_err(|e| self.nand(e))?;
        self.flash.host_programs += 1;
        self.dies[tx.die.idx()].writes_done += 1;
        self.mark_start(tx.req);
        self.new_op(tx.die, timing.done, [t, NIL], 1, Some(PeKind::Program));
        self.maybe_start_gc(tx.plane);
        Ok(true)
    }

    /// Host write `t` found `plane` without a free page (error `e`). Returns false: the
    /// write was not issued but requeued.
    fn write_to_full_plane(
        &mut self,
        t: u32,
        plane: PlaneId,
        e: lamina_ftl::FtlError,
    ) -> Result<bool, RunError> {
        self.maybe_start_gc(plane);
        let from = self.txns.get(t).die;
        if self.gc_queued(plane) {
            // The writes ahead of GC used up the plane (an arbiter or GC mode that lets
            // host writes pass a queued GC job): park the write at the head of its queue
            // until GC on this die frees space (issue #8 swarm, seed 226).
            let d = &mut self.dies[from.idx()];
            d.writes.push_front(t);
            d.write_stalled = true;
            return Ok(false);
        }
        // Nothing to reclaim on this plane: every page holds valid data (a dynamic
        // placement piled logical pages onto it). Write elsewhere: the next plane, in
        // plane order, with free blocks or GC that frees some.
        let n = self.geo.total_planes();
        let Some(q) = (1..n).map(|i| PlaneId((plane.0 + i) % n)).find(|&q| self.can_take_writes(q)) else {
            // No plane has room: the device is truly out of space.
            return Err(RunError::Ftl { at: self.now, source: e });
        };
        self.flash.full_plane_redirects += 1;
        let die = self.geo.die_of_plane(q);
        let m = self.txns.get_mut(t);
        m.plane = q;
        m.die = die;
        self.dies[die.idx()].writes.push_front(t);
        if die != from {
            self.dispatch(die, false)?;
        }
        Ok(false)
    }

    /// True if a GC job for `plane` is queued or running on its die.
    fn gc_queued(&self, plane: PlaneId) -> bool {
        self.dies[self.geo.die_of_plane(plane).idx()].gc.iter().any(|&(p, _)| p == plane)
    }

    /// True if `plane` has free blocks above the GC threshold, or a GC job (running, or
    /// started now) that will free some.
    fn can_take_writes(&mut self, plane: PlaneId) -> bool {
        if !self.ftl.needs_gc(plane) {
            return true;
        }
        self.maybe_start_gc(plane);
        self.gc_queued(plane)
    }

    fn maybe_start_gc(&mut self, plane: PlaneId) {
        if !self.ftl.needs_gc(plane) {
            return;
        }
        if self.gc_queued(plane) {
            return;
        }
        let die = self.geo.die_of_plane(plane);
        if self.ftl.gc_begin(plane).is_some() {
            self.flash.gc_jobs += 1;
            let s = self.seq;
            self.seq += 1;
            self.dies[die.idx()].gc.push_back((plane, s));
        }
    }

    /// Issue the next step of the die's oldest GC job. Returns false if the job ended
    /// without issuing anything.
    fn issue_gc(&mut self, die: DieId) -> Result<bool, RunError> {
        let (plane, _) = *self.dies[die.idx()].gc.front().expect("gc head");
        match self.ftl.gc_step(plane) {
            GcStep::Done => {
                self.dies[die.idx()].gc.pop_front();
                // The plane may still be short of free blocks.
                self.maybe_start_gc(plane);
                if self.dies[die.idx()].gc.is_empty() {
                    // No GC left to wait for: a stalled write retries (and fails with the
                    // FTL's error if the device is truly out of space).
                    self.dies[die.idx()].write_stalled = false;
                }
                Ok(false)
            }
            GcStep::Move { from, to, copyback, .. } => {
                let fa = self.geo.addr(from);
                let ta = self.geo.addr(to);
                let tag = self.device.tag(from).unwrap_or(0);
                let done = if copyback {
                    let (f, tt) = ([fa], [ta]);
                    self.device
                        .issue(self.now, &Command::CopyBack { from: &f, to: &tt })
                        .map_err(|e| self.nand(e))?
                        .done
                } else {
                    let f = [fa];
                    let ps = self.page_size;
                    let r = self
                        .device
                        .issue(self.now, &Command::Read { pages: &f, offset_bytes: 0, len_bytes: ps })
                        .map_err(|e| self.nand(e))?;
                    self.note_suspension(&r);
                    self.flash.gc_reads += 1;
                    let (tt, tags) = ([ta], [tag]);
                    self.device
                        .issue(self.now, &Command::Program { pages: &tt, tags: &tags })
                        .map_err(|e| self.nand(e))?
                        .done
                };
                self.flash.gc_programs += 1;
                self.flash.gc_moves += 1;
                self.dies[die.idx()].writes_done += 1;
                self.new_op(die, done, [NIL, NIL], 0, Some(PeKind::Program));
                Ok(true)
            }
            GcStep::Erase { block } => {
                let b = [self.geo.addr(self.geo.first_page(block))];
                let t =
                    self.device.issue(self.now, &Command::Erase { blocks: &b }).map_err(|e| self.nand(e))?;
                self.flash.erases += 1;
                self.new_op(die, t.done, [NIL, NIL], 0, Some(PeKind::Erase));
                Ok(true)
            }
            GcStep::PartialErase { block, range } => {
                let pb = pb_of_range(self.geo.pages_per_block(), range);
                let b = self.geo.addr(self.geo.first_page(block));
                let t = self
                    .device
                    .issue(self.now, &Command::PartialErase { block: b, pb })
                    .map_err(|e| self.nand(e))?;
                self.flash.partial_erases += 1;
                self.new_op(die, t.done, [NIL, NIL], 0, Some(PeKind::Erase));
                Ok(true)
            }
        }
    }

    fn op_done(&mut self, op: u32) -> Result<(), RunError> {
        let o = self.ops.remove(op);
        let d = &mut self.dies[o.die.idx()];
        d.inflight -= 1;
        // An operation finished (GC may have freed space): a stalled write may retry.
        d.write_stalled = false;
        self.last_op_done = self.now;
        if d.pe_op == op {
            d.pe_op = NIL;
        }
        for &t in &o.txns[..o.ntxns as usize] {
            let tx = self.txns.remove(t);
            self.after_txn(tx)?;
        }
        self.dispatch(o.die, false)?;
        if !self.undecided.is_empty() {
            self.retry_undecided()?;
        }
        Ok(())
    }

    /// Bookkeeping when a transaction's flash work is done.
    fn after_txn(&mut self, tx: Txn) -> Result<(), RunError> {
        match tx.kind {
            TxnKind::Read | TxnKind::Write => self.finish_sub(tx.req, 1),
            TxnKind::RmwRead => {
                let w = tx.link;
                let wd = self.txns.get(w).die;
                let parked = &mut self.dies[wd.idx()].parked;
                let pos = parked.iter().position(|&p| p == w).expect("parked read-modify-write");
                parked.remove(pos);
                self.dies[wd.idx()].writes.push_front(w);
                // The write's die may be idle (the read ran on another die).
                self.dispatch(wd, false)
            }
            TxnKind::Flush => {
                let b = self.buffer.as_mut().expect("flush without buffer");
                let FlushDone { trimmed, waiter } = b.flush_done(tx.link, tx.lpn, &mut self.flushes);
                if trimmed {
                    // Trimmed while its program was in flight: the program mapped data
                    // the host discarded; unmap it again.
                    self.ftl.trim(Lpn(tx.lpn));
                }
                if let Some((req, ready)) = waiter {
                    if ready > self.now {
                        self.events.push(ready, Event::DramDone { req, pages: 1 });
                    } else {
                        self.finish_sub(req, 1)?;
                    }
                }
                self.enqueue_flushes()
            }
        }
    }

    fn finish_sub(&mut self, req: u32, n: u32) -> Result<(), RunError> {
        let r = self.reqs.get_mut(req);
        r.remaining -= n;
        if r.remaining > 0 {
            return Ok(());
        }
        let r = self.reqs.remove(req);
        let wait = r.last_start.since(r.arrival);
        if let Some(log) = self.latency_log.as_mut() {
            log.record(r.arrival, r.op, r.bytes, r.lpn, self.now.since(r.arrival), wait);
        }
        match r.op {
            IoOp::Read => self.stats.complete(true, r.bytes, r.arrival, self.now, wait),
            IoOp::Write => self.stats.complete(false, r.bytes, r.arrival, self.now, wait),
            IoOp::Trim => {
                self.stats.trims += 1;
                if self.now > self.stats.last_completion {
                    self.stats.last_completion = self.now;
                }
            }
        }
        self.admitted -= 1;
        if let Some(after) = self.cfg.buffer.idle_flush_after
            && self.reqs.is_empty()
            && self.buffer.is_some()
        {
            self.events.push(self.now + after, Event::IdleFlush { epoch: self.epoch });
        }
        if let Some(next) = self.host_queue.pop_front() {
            // A request waiting in the host queue enters now; its response still counts
            // from its arrival.
            self.admit(next)?;
        }
        Ok(())
    }
}

/// The partial-block index (PB 1 = whole block, 2k and 2k+1 the halves of k) of a
/// binary-tree page range.
pub(crate) fn pb_of_range(pages_per_block: u32, r: lamina_ftl::PageRange) -> u32 {
    assert!(r.page_count > 0 && pages_per_block % r.page_count == 0, "range {r:?} is not a tree node");
    let parts = pages_per_block / r.page_count;
    assert!(parts.is_power_of_two() && r.first_page % r.page_count == 0, "range {r:?} is not a tree node");
    parts + r.first_page / r.page_count
}

impl Simulation {
    pub(crate) fn take_versions(&mut self) -> Option<LpnTable<u32>> {
        self.versions.take()
    }

    pub(crate) fn put_versions(&mut self, v: Option<LpnTable<u32>>) {
        self.versions = v;
    }
}
