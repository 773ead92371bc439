//! The host front end: requests, their split into logical pages, the write buffer and
//! controller DRAM, admission (host queue depth, closed loop) and completion.

use lamina_nand_model::{DieId, Lpn, Nanos, PlaneId, Ppa, SimTime};
use lamina_sched::TxnKind;

use super::controller::Txn;
use super::warm::HostQueue;
use super::{Completion, Event, NIL, RunError, Simulation};
use crate::buffer::{self, Put, WriteBuffer};
use crate::config::{HostMode, SimConfig};
use crate::slab::Slab;
use crate::stats::{Attribution, RequestStats};
use crate::trace::{IoOp, IoRequest};

/// A host request being served.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Request {
    pub(crate) arrival: SimTime,
    pub(crate) op: IoOp,
    pub(crate) bytes: u64,
    pub(crate) remaining: u32,
    /// Latest time a sub-request of this request started service.
    pub(crate) last_start: SimTime,
    /// Index in submission order.
    pub(crate) id: u64,
    /// First logical page (for the latency log).
    pub(crate) lpn: u64,
    /// Pages it spans.
    pub(crate) pages: u32,
    /// When its latest controller-DRAM access started.
    pub(crate) dram_start: SimTime,
    /// Its latest lazily completed page (`controller::LazyOp`): the key of its
    /// completion (0 = none) and its die. Such pages are counted done in `remaining`
    /// when issued; the request completes no earlier than this key.
    pub(crate) lazy_key: u128,
    pub(crate) lazy_die: u32,
    /// All its parts are done but that page: its completion event completes it.
    pub(crate) deferred: bool,
}

/// How one page of a host request is served when it is admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Served {
    /// Complete now without any device work (unwritten page, trim).
    Instant,
    /// From controller DRAM: this many bytes move over the DRAM bus.
    Dram(u32),
    /// Queued for flash or for buffer space; completes later.
    Queued,
}

/// The host front end's state.
pub(crate) struct Host {
    pub(crate) reqs: Slab<Request>,
    /// Requests waiting for a device-queue slot, with their submission index (warmed
    /// ahead of their admission).
    pub(crate) host_queue: HostQueue,
    pub(crate) admitted: u32,
    pub(crate) peak_outstanding: u32,
    pub(crate) buffer: Option<WriteBuffer>,
    pub(crate) flushes: Vec<buffer::Flush>,
    /// When the controller DRAM finishes its current transfers.
    dram_free_at: SimTime,
    /// Host writes queued for flash without a buffer (not yet programmed), per LPN: a
    /// read that finds its page unmapped but here is served from the queued write's
    /// data. Small (queued writes only), so it stays in cache; a per-LPN bit set over
    /// the footprint cost 5 % of replay throughput in cache misses. Lookups only; never
    /// iterated (an open-addressing table of its own: [`super::queued`]). A write enters
    /// only once it waits (`Txn::counts_queued`): one that is programmed as it is
    /// queued would leave again before any read could look.
    pub(crate) queued_writes: super::queued::QueuedWrites,
    /// Bumped on every arrival (an idle flush is valid only if no arrival followed it).
    pub(crate) epoch: u32,
    /// Requests entered so far (the next request's id).
    submitted: u64,
    pub(crate) stats: RequestStats,
    /// Completions for the stepping API (kept only when it is used).
    pub(crate) completions: Vec<Completion>,
    pub(crate) keep_completions: bool,
    /// Scratch: the waiting requests a reordering scheduler chooses from.
    waiting: Vec<lamina_sched::Waiting>,
    /// Reads of pages never written (or trimmed): completed without flash access.
    pub(crate) unwritten_reads: u64,
    /// Reads of pages whose only write is still queued: served from its data in DRAM.
    pub(crate) pending_write_reads: u64,
}

impl Host {
    pub(crate) fn new(cfg: &SimConfig, logical_pages: u64, page_size: u32) -> Host {
        let buffer = (cfg.buffer.size_bytes >= page_size as u64).then(|| {
            let cap = (cfg.buffer.size_bytes / page_size as u64).min(u32::MAX as u64 - 1) as u32;
            let wm = (cap as f64 * cfg.buffer.flush_watermark) as u32;
            WriteBuffer::new(cap, logical_pages, wm)
        });
        Host {
            reqs: Slab::default(),
            host_queue: HostQueue::default(),
            admitted: 0,
            peak_outstanding: 0,
            buffer,
            flushes: Vec::new(),
            dram_free_at: SimTime::ZERO,
            queued_writes: super::queued::QueuedWrites::default(),
            epoch: 0,
            submitted: 0,
            stats: RequestStats::default(),
            completions: Vec::new(),
            keep_completions: false,
            waiting: Vec::new(),
            unwritten_reads: 0,
            pending_write_reads: 0,
        }
    }
}

impl Simulation {
    pub(super) fn arrive(&mut self, r: IoRequest) -> Result<(), RunError> {
        self.host.epoch = self.host.epoch.wrapping_add(1);
        // Requests are numbered in submission order, whatever order they enter in.
        let id = self.host.submitted;
        self.host.submitted += 1;
        if self.hif.is_some() {
            return self.hif_arrive(id, r);
        }
        self.arrive_device(id, r)
    }

    /// Request `id` reaches the controller: admitted, or queued if the device queue
    /// (`host.queue_depth`) is full.
    #[inline]
    pub(super) fn arrive_device(&mut self, id: u64, r: IoRequest) -> Result<(), RunError> {
        let depth = self.cfg.host.queue_depth;
        if self.cfg.host.mode == HostMode::Open && depth != 0 && self.host.admitted >= depth {
            self.host.host_queue.push_back(id, r);
            return Ok(());
        }
        self.admit(id, r)
    }

    /// True if a request arriving now would wait in the host queue (open loop, the
    /// device queue full or others already waiting). A speed hint for the replay's
    /// warming only.
    #[inline]
    pub(super) fn arrivals_wait(&self) -> bool {
        let depth = self.cfg.host.queue_depth;
        self.cfg.host.mode == HostMode::Open
            && depth != 0
            && (self.host.admitted >= depth || !self.host.host_queue.is_empty())
    }

    fn admit(&mut self, id: u64, r: IoRequest) -> Result<(), RunError> {
        let (first, last) = self.page_math.pages(&r);
        let first_lpn = self.wrap(first);
        let h = &mut self.host;
        h.admitted += 1;
        h.peak_outstanding = h.peak_outstanding.max(h.admitted);
        let npages = (last - first + 1) as u32;
        let req = h.reqs.insert(Request {
            arrival: SimTime(r.arrival.as_ns()),
            op: r.op,
            bytes: r.size_bytes,
            remaining: npages,
            last_start: self.now,
            id,
            lpn: first_lpn,
            pages: npages,
            dram_start: self.now,
            lazy_key: 0,
            lazy_die: 0,
            deferred: false,
        });
        let (mut instant, mut dram_pages, mut dram_bytes) = (0u32, 0u32, 0u64);
        if r.op == IoOp::Read {
            self.note_read_for_placement(first_lpn, npages);
        }
        if r.op == IoOp::Write && self.host.buffer.is_none() {
            // The placement sees the request whole (`mcs` spreads it over chips).
            self.begin_placement_request(npages);
        }
        let batch = self.begin_batch();
        // Reads look up a batch of pages first: the map loads are independent, so their
        // cache misses overlap instead of serialising behind each page's dispatch.
        const BATCH: usize = 16;
        let mut mapped = [None; BATCH];
        let mut epoch = None;
        for page in first..=last {
            let start = if page == first { self.page_math.offset_in_page(r.offset_bytes) as u32 } else { 0 };
            let end = if page == last {
                (self.page_math.offset_in_page(r.offset_bytes + r.size_bytes - 1) + 1) as u32
            } else {
                self.page_size
            };
            let lpn = self.wrap(page);
            let slot = ((page - first) % BATCH as u64) as usize;
            if r.op == IoOp::Read && slot == 0 {
                let n = (last - page + 1).min(BATCH as u64);
                let mut warm = 0;
                for (i, m) in mapped.iter_mut().enumerate().take(n as usize) {
                    *m = self.ftl.lookup(Lpn(self.wrap(page + i as u64)));
                    if let Some(ppa) = *m {
                        // The device checks each page's block record as it issues the
                        // read: load them now, so that their misses overlap.
                        warm ^= self.device.warm_block(ppa);
                    }
                }
                std::hint::black_box(warm);
                epoch = self.ftl.lookup_epoch();
            }
            let served = match r.op {
                IoOp::Read => self.sub_read(req, lpn, start, end - start, mapped[slot], epoch)?,
                IoOp::Write => self.sub_write(req, lpn, start, end - start)?,
                IoOp::Trim => self.sub_trim(lpn, end - start),
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
        // Both are no-ops in the common case (no buffer, no batching scheduler): checked
        // here so that it costs no call per request.
        if !self.host.flushes.is_empty() {
            self.enqueue_flushes()?;
        }
        if batch {
            self.end_batch(batch)?;
        }
        if dram_pages > 0 {
            // One DRAM access for all DRAM-served pages of this request.
            let done = self.dram_access(req, dram_bytes);
            self.events.push(done, Event::DramDone { req, pages: dram_pages });
        }
        if instant > 0 {
            self.finish_sub(req, instant, &Attribution::default())?;
        }
        Ok(())
    }

    /// Reserve the controller DRAM for `bytes` on behalf of `req` (FCFS, one transfer at
    /// a time at `buffer.dram_bandwidth_bytes_per_s`); returns when the access
    /// completes (transfer end + `buffer.dram_latency`).
    fn dram_access(&mut self, req: u32, bytes: u64) -> SimTime {
        let h = &mut self.host;
        let start = self.now.max(h.dram_free_at);
        let bw = self.cfg.buffer.dram_bandwidth_bytes_per_s as u128;
        let xfer = Nanos((bytes as u128 * 1_000_000_000).div_ceil(bw) as u64);
        h.dram_free_at = start + xfer;
        let r = h.reqs.get_mut(req);
        if start > r.last_start {
            r.last_start = start;
        }
        r.dram_start = start;
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
        super::pages::wrap(lpn, self.logical_pages)
    }

    /// One page of a read; `mapped` is the FTL's mapping of `lpn` when its
    /// [`lamina_ftl::Ftl::lookup_epoch`] read `epoch`.
    fn sub_read(
        &mut self,
        req: u32,
        lpn: u64,
        offset: u32,
        len: u32,
        mapped: Option<Ppa>,
        epoch: Option<u64>,
    ) -> Result<Served, RunError> {
        if self.host.buffer.is_some() && self.buffer_read_hit(lpn, offset, len) {
            return Ok(Served::Dram(len));
        }
        let (lpn, mapped) = match self.mirror_of(lpn) {
            Some(m) => self.nearer_copy(lpn, mapped, m.0),
            None => (lpn, mapped),
        };
        let Some(ppa) = mapped else {
            if self.host.queued_writes.contains(lpn)
                || self.host.buffer.as_ref().is_some_and(|b| b.holds(lpn))
            {
                // Overtook its page's first write, which is still queued, or read a page
                // that is only partly in the write buffer and was never programmed: the
                // data is in controller DRAM (the rest of the page is unwritten), served
                // from there, not in 0 ns (issue #8, 0b; new-user trial 2026-12).
                self.host.pending_write_reads += 1;
                return Ok(Served::Dram(len));
            }
            self.host.unwritten_reads += 1;
            return Ok(Served::Instant);
        };
        if self.remap.is_some() && len < self.page_size && self.remap_read(req, lpn, offset, len)? {
            return Ok(Served::Queued);
        }
        // Only the die and plane are needed to queue the read (no full address decode).
        let plane = self.geo.plane_of_ppa(ppa);
        let die = self.geo.die_of_plane(plane);
        // Issued at once, the read need not look its page up again (`try_direct_read`).
        self.ctl.read_hint = epoch.map(|e| (lpn, ppa, e));
        self.push_txn(&mut Txn::new(TxnKind::Read, lpn, req, die, plane, offset, len))?;
        Ok(Served::Queued)
    }

    fn sub_write(&mut self, req: u32, lpn: u64, offset: u32, len: u32) -> Result<Served, RunError> {
        if self.host.buffer.is_some() {
            return Ok(self.sub_write_buffered(req, lpn, offset, len));
        }
        let mut t = Txn::new(TxnKind::Write, lpn, req, DieId(0), PlaneId(0), offset, len);
        t.partial = len != self.page_size;
        // Counted in `queued_writes` if it waits for its program (`Txn::counts_queued`).
        t.counts_queued = true;
        if let Some(m) = self.mirror_of(lpn) {
            // RAIN 1: the mirror copy is written too; the request completes with both.
            // Only the host's page is looked up in `queued_writes`.
            self.host.reqs.get_mut(req).remaining += 1;
            self.place_and_push(t)?;
            t.lpn = m.0;
            t.counts_queued = false;
        }
        self.place_and_push(t)?;
        Ok(Served::Queued)
    }

    /// [`Self::sub_read`] with a write buffer: whether the buffer holds the bytes read.
    /// Out of line, as the other paths of configurations off the common one
    /// (`sub_write_buffered`, `sub_trim`, `remap_read`, `nearer_copy`): `admit`'s code
    /// stays small enough to stay in the instruction cache beside the completion path
    /// that calls it under a backlog (docs/performance.md, "Round of 2026-11-30 (eighth
    /// session)").
    #[inline(never)]
    fn buffer_read_hit(&mut self, lpn: u64, offset: u32, len: u32) -> bool {
        let mask = self.mask_of(offset, len);
        self.host.buffer.as_mut().is_some_and(|b| b.read(lpn, mask))
    }

    /// [`Self::sub_write`] with a write buffer.
    #[inline(never)]
    fn sub_write_buffered(&mut self, req: u32, lpn: u64, offset: u32, len: u32) -> Served {
        let mask = self.mask_of(offset, len);
        let b = self.host.buffer.as_mut().expect("buffer");
        match b.write(lpn, mask, &mut self.host.flushes) {
            Put::Stored => Served::Dram(len),
            Put::Evicted { victim } => {
                // The page is in DRAM, but it took the place of a page whose program
                // is in flight: this write completes when that program does.
                let ready = self.dram_access(req, len as u64);
                self.host.buffer.as_mut().expect("buffer").set_waiter(victim, req, ready);
                Served::Queued
            }
        }
    }

    /// One page of a trim covering `len` bytes of host page `lpn`.
    #[inline(never)]
    fn sub_trim(&mut self, lpn: u64, len: u32) -> Served {
        if let Some(b) = self.host.buffer.as_mut() {
            b.discard(lpn);
        }
        if len == self.page_size {
            self.ftl.trim(Lpn(lpn));
            self.remap_invalidate(lpn);
            if let Some(m) = self.mirror_of(lpn) {
                self.ftl.trim(m);
            }
            // The trim supersedes a queued write's data (which still programs
            // later, as it would on a device).
            self.host.queued_writes.remove(lpn);
        }
        Served::Instant
    }

    /// The mirror of host page `lpn` under RAIN 1 (`None` without replication, without
    /// a call into the FTL).
    #[inline]
    fn mirror_of(&self, lpn: u64) -> Option<Lpn> {
        if self.replicated { self.ftl.replica(Lpn(lpn)) } else { None }
    }

    /// Of the two copies of host page `lpn` (mapped at `mapped`) and its mirror `m`, the
    /// one to read: a mapped copy over an unmapped one, else the one whose die has less
    /// work (queued transactions and GC jobs plus operations in flight), the primary on a
    /// tie. Returns the logical page read and its mapping.
    #[inline(never)]
    fn nearer_copy(&mut self, lpn: u64, mapped: Option<Ppa>, m: u64) -> (u64, Option<Ppa>) {
        let Some(mirror) = self.ftl.lookup(Lpn(m)) else { return (lpn, mapped) };
        let Some(primary) = mapped else {
            self.ctl.counters.mirror_reads += 1;
            return (m, Some(mirror));
        };
        let die_of = |ppa: Ppa| self.geo.die_of_ppa(ppa);
        if self.die_load(die_of(mirror)) < self.die_load(die_of(primary)) {
            self.ctl.counters.mirror_reads += 1;
            (m, Some(mirror))
        } else {
            (lpn, mapped)
        }
    }

    pub(super) fn enqueue_flushes(&mut self) -> Result<(), RunError> {
        // In the order the buffer asked (least recently used first).
        if self.host.flushes.is_empty() {
            return Ok(());
        }
        let batch = self.begin_batch();
        let mut flushes = std::mem::take(&mut self.host.flushes);
        self.begin_placement_request(flushes.len() as u32);
        for f in flushes.drain(..) {
            let mut t = Txn::new(TxnKind::Flush, f.lpn, NIL, DieId(0), PlaneId(0), 0, self.page_size);
            t.partial = f.mask != buffer::FULL;
            // A flush's link is its buffer slot (handed back at completion).
            t.link = f.slot;
            self.place_and_push(t)?;
        }
        // The buffer goes back for reuse unless flushes were asked for meanwhile (a
        // completion inside the pushes may admit a write; its flushes must not be
        // dropped: the remap joiners' bug of swarm seed 30818 was this pattern).
        if self.host.flushes.is_empty() {
            self.host.flushes = flushes;
        }
        self.end_batch(batch)
    }

    /// A host write's flash program was issued: reads of the page now find it through
    /// the FTL instead of the queued write's data.
    pub(super) fn write_mapped(&mut self, lpn: u64) {
        self.host.queued_writes.programmed(lpn);
    }

    /// A buffer flush completed: hand its slot back; a writer waiting for the slot may
    /// complete.
    pub(super) fn flush_completed(&mut self, slot: u32, lpn: u64) -> Result<(), RunError> {
        let b = self.host.buffer.as_mut().expect("flush without buffer");
        let buffer::FlushDone { trimmed, waiter } = b.flush_done(slot, lpn, &mut self.host.flushes);
        if trimmed {
            // Trimmed while its program was in flight: the program mapped data the host
            // discarded; unmap it again.
            self.ftl.trim(Lpn(lpn));
        }
        if let Some((req, ready)) = waiter {
            if ready > self.now {
                self.events.push(ready, Event::DramDone { req, pages: 1 });
            } else {
                // Its DRAM copy ended before the program of the page it displaced: it
                // queued until its DRAM access started (as every DRAM-served page, and
                // as the queue-wait table counts it), then the DRAM time, then the wait
                // for that program is `device_wait` (a die busy with the work it waits
                // for). The parts add up to its response; with several pages of the
                // request in DRAM, `dram_start` is the latest one's, and a `ready`
                // before it counts no DRAM time.
                let r = self.host.reqs.get(req);
                let copied = ready.max(r.dram_start);
                let a = Attribution {
                    queue_wait: r.dram_start.saturating_since(r.arrival),
                    dram: copied.saturating_since(r.dram_start),
                    device_wait: self.now.saturating_since(copied),
                    ..Attribution::default()
                };
                self.finish_sub(req, 1, &a)?;
            }
        }
        self.enqueue_flushes()
    }

    /// A sub-request of `req` started service now.
    #[inline]
    pub(super) fn mark_start(&mut self, req: u32) {
        if req != NIL {
            let r = self.host.reqs.get_mut(req);
            if self.now > r.last_start {
                r.last_start = self.now;
            }
        }
    }

    /// `pages` pages of `req` finished their controller-DRAM access.
    pub(super) fn dram_done(&mut self, req: u32, pages: u32) -> Result<(), RunError> {
        let r = self.host.reqs.get(req);
        let a = Attribution {
            queue_wait: r.dram_start.saturating_since(r.arrival),
            dram: self.now.saturating_since(r.dram_start),
            ..Attribution::default()
        };
        self.finish_sub(req, pages, &a)
    }

    /// `n` pages of `req` are done, the last of them with attribution `attr`; the
    /// request completes with its last page.
    pub(super) fn finish_sub(&mut self, req: u32, n: u32, attr: &Attribution) -> Result<(), RunError> {
        let r = self.host.reqs.get_mut(req);
        r.remaining -= n;
        if r.remaining > 0 {
            return Ok(());
        }
        if r.lazy_key > self.ctl.cur_key {
            // Its latest lazily completed page is still running: that page completes it.
            self.defer_request(req);
            return Ok(());
        }
        self.complete_request(req, attr)
    }

    /// Request `req`'s last part completed now with attribution `attr` (its critical
    /// part): report it and admit a request waiting in the host queue.
    pub(super) fn complete_request(&mut self, req: u32, attr: &Attribution) -> Result<(), RunError> {
        // Parts complete in time order: the last one (`attr`) is the request's critical
        // part.
        let r = self.host.reqs.remove(req);
        if self.hif.is_some() {
            // The host has it when its completion crosses the link.
            self.hif_device_done(r.id, r.last_start, attr);
        } else {
            let wait = r.last_start.since(r.arrival);
            self.record_completion(r.id, r.op, r.bytes, r.arrival, r.lpn, wait, attr, None);
        }
        if r.op == IoOp::Read && self.realloc.is_some() {
            self.realloc_after_read(r.lpn, r.pages)?;
        }
        let h = &mut self.host;
        h.admitted -= 1;
        if let Some(after) = self.cfg.buffer.idle_flush_after
            && h.reqs.is_empty()
            && h.buffer.is_some()
        {
            self.events.push(self.now + after, Event::IdleFlush { epoch: h.epoch });
        }
        let i = self.next_admission();
        let (pages, ftl) = (self.page_math, self.ftl.as_ref());
        if let Some((id, next)) = self.host.host_queue.take(i, pages, self.logical_pages, |w, r| {
            ftl.warm_writes(w);
            ftl.warm_lookups(r);
        }) {
            // A request waiting in the host queue enters now; its response still counts
            // from its arrival.
            self.admit(id, next)?;
        }
        Ok(())
    }

    /// Request `id` completed at the host now: response time, latency log, stepping-API
    /// completion. `hif` is its host-interface time when the interface is on.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(super) fn record_completion(
        &mut self,
        id: u64,
        op: IoOp,
        bytes: u64,
        arrival: SimTime,
        lpn: u64,
        wait: Nanos,
        attr: &Attribution,
        hif: Option<Nanos>,
    ) {
        let h = &mut self.host;
        if let Some(log) = self.latency_log.as_mut() {
            log.record(arrival, op, bytes, lpn, self.now.since(arrival), wait);
        }
        match op {
            IoOp::Read | IoOp::Write => {
                h.stats.complete_attributed(op == IoOp::Read, bytes, arrival, self.now, wait, attr, hif);
            }
            IoOp::Trim => {
                h.stats.trims += 1;
                if self.now > h.stats.last_completion {
                    h.stats.last_completion = self.now;
                }
            }
        }
        if h.keep_completions {
            h.completions.push(Completion { id, op, bytes, arrival, done: self.now });
        }
    }

    /// Which waiting host request enters the device next: the oldest, unless the
    /// scheduler reorders admission (Sprinkler's RIOS), which then sees, for each of the
    /// first `sched.window + 1` waiting requests, its pages and how many of them are on
    /// idle dies.
    fn next_admission(&mut self) -> usize {
        if self.host.host_queue.len() < 2 || !self.ctl.scheduler().reorders_admission() {
            return 0;
        }
        let n = self.host.host_queue.len().min(self.cfg.sched.window as usize + 1);
        let mut waiting = std::mem::take(&mut self.host.waiting);
        waiting.clear();
        for (_, r) in self.host.host_queue.iter().take(n) {
            let (first, last) = self.page_math.pages(&r);
            let mut w = lamina_sched::Waiting { pages: (last - first + 1) as u32, idle_pages: 0 };
            for page in first..=last {
                let lpn = Lpn(self.wrap(page));
                let die = match (r.op, self.ftl.lookup(lpn)) {
                    (IoOp::Read, Some(ppa)) => self.geo.die_of_ppa(ppa),
                    _ => self.geo.die_of_plane(self.ftl.static_plane(lpn)),
                };
                w.idle_pages += u32::from(self.die_idle_now(die));
            }
            waiting.push(w);
        }
        let i = self.ctl.scheduler_mut().admit(&waiting).min(n - 1);
        self.host.waiting = waiting;
        i
    }

    /// The arrival of a request being served (for error messages).
    pub(super) fn arrival_of(&self, req: u32) -> SimTime {
        if req == NIL { self.now } else { self.host.reqs.get(req).arrival }
    }
}
