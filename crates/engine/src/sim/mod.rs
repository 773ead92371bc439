//! The deterministic discrete-event replay loop.
//!
//! A [`Simulation`] is split by owned state into rooms, each in its own file:
//! - **host front end** ([`host`]): requests, splitting into logical pages, the write
//!   buffer and controller DRAM, admission and completion, response-time statistics;
//! - **controller** ([`controller`]): the flash transactions, the per-die queues, the
//!   transaction scheduler ([`lamina_sched::TxnScheduler`]) and placement policy, the
//!   flash operations in flight, and the counters of what it issued;
//! - **GC driver** ([`gc`]): which planes have a GC job, starting jobs and issuing their
//!   steps on the dies the steps touch;
//! - **verifier** ([`verify`]): the latest programmed version of every page.
//!
//! This file keeps the clock and the event queue. Busy state is read from the device
//! (the controller counts only operations whose completion it has not yet processed),
//! each layer counts its own events (the device its operations, the FTL its writes,
//! moves and erases, the controller its transactions), and the report is a function of
//! their snapshots.
//!
//! All state changes happen in event order; ties are broken by insertion sequence, so a
//! run is a pure function of (config, trace, seed).
//!
//! Flow of a host request: arrival → (host queue if the device queue is full) → split
//! into logical-page sub-requests → buffer / per-die transaction queues → when a die can
//! take work, the scheduler chooses its next command → the FTL translates (reads) or
//! allocates (writes) at that moment → the NAND model reserves bus and die and returns
//! the phase times → an `OpDone` event completes the transactions → the request
//! completes when its last sub-request does.
//!
//! Two ways to drive it: [`Simulation::run`] replays a whole trace; the stepping API
//! ([`Simulation::submit`], [`Simulation::advance_until`],
//! [`Simulation::next_event_time`], [`Simulation::take_completions`]) lets a caller feed
//! requests one at a time (a server, a co-simulation) and collect completions.

use lamina_ftl::Ftl;
use lamina_nand_model::{Device, DieId, Geometry, Lpn, NandError, SimTime};
use lamina_sched::{Placement, TxnScheduler};

use crate::config::{HostMode, SimConfig};
use crate::queue::EventQueue;
use crate::trace::{IoOp, IoRequest};

mod controller;
mod current;
mod gc;
mod host;
mod hostif;
pub(crate) mod pages;
mod queued;
mod realloc;
mod remap;
mod verify;
mod warm;

pub use controller::FlashCounters;
pub(crate) use host::Host;
pub use verify::VerifyError;
pub(crate) use verify::{bump_version, tag_of};

use controller::Controller;
use gc::GcDriver;
use verify::Verifier;

/// "No index" in slab links.
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
    /// The completion of die `die`'s lazily completed host page (`controller::LazyOp`),
    /// scheduled only when work was queued on the die meanwhile or its request completes
    /// with it.
    Lazy { die: u32 },
    /// A channel frees: retry binding undecided writes.
    Recheck,
    /// A host-interface message (or SATA HBA stage) of a request finished.
    HostIf { slot: u32, step: hostif::Step },
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
    /// A request given to [`Simulation::submit`] arrives before the simulated present.
    #[error(
        "request arrives at {arrival}, before the simulated present {now}; submit requests in arrival order"
    )]
    PastArrival {
        /// The request's arrival.
        arrival: SimTime,
        /// The simulation's clock.
        now: SimTime,
    },
}

/// A host request that completed, as the stepping API returns it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    /// Its index in submission order (0 = the first request submitted or replayed).
    pub id: u64,
    /// Read, write or trim.
    pub op: IoOp,
    /// Its size in bytes.
    pub bytes: u64,
    /// When it arrived.
    pub arrival: SimTime,
    /// When it completed.
    pub done: SimTime,
}

/// The key after every event at `t` (`controller::Controller::cur_key` while requests
/// arriving at `t` are admitted: they run after those events).
#[inline]
fn after_events_at(t: SimTime) -> u128 {
    (u128::from(t.0) << 64) | u128::from(u64::MAX)
}

/// The simulation state. Build with [`crate::SimulationBuilder`].
pub struct Simulation {
    pub(crate) cfg: SimConfig,
    pub(crate) geo: Geometry,
    pub(crate) device: Device,
    pub(crate) ftl: Box<dyn Ftl>,
    events: EventQueue<Event>,
    pub(crate) now: SimTime,
    pub(crate) host: Host,
    pub(crate) ctl: Controller,
    pub(crate) gc: GcDriver,
    verifier: Verifier,
    /// How far the die queues' fronts are warmed ([`Simulation::warm_queue_ahead`]).
    warmth: warm::QueueWarmth,
    pub(crate) events_processed: u64,
    /// Requests arriving at the present instant are being queued as one batch (batching
    /// schedulers only): dies are offered their work when time moves on.
    arrivals_open: bool,
    /// When the last flash operation completed (utilisation counts busy time up to the
    /// later of this and the last request completion); a lazily completed page
    /// (`controller::LazyOp`) counts from its issue.
    pub(crate) last_op_done: SimTime,
    /// [`crate::SimulationBuilder::lazy_completion`].
    pub(crate) lazy_allowed: bool,
    /// What preconditioning did (for the report).
    pub(crate) preconditioned: Option<crate::report::PreconditionSummary>,
    /// The FTL's and the device's counters when the timed run started (the report counts
    /// the timed run only; prefill and preconditioning are reported apart).
    pub(crate) baseline: Option<(lamina_ftl::FtlStats, lamina_nand_model::DeviceStats)>,
    /// Erase counts when the timed run started, on devices with partial-block erase
    /// (the report's replay-only AEP/VEP).
    pub(crate) erase_snapshot: Option<crate::wear::EraseSnapshot>,
    page_size: u32,
    /// Byte offsets to pages ([`pages::PageMath`]).
    page_math: pages::PageMath,
    logical_pages: u64,
    /// The FTL keeps a second copy of each host page ([`Ftl::replica`], asked once: the
    /// host asks for a page's mirror only then, not per page through the trait).
    pub(crate) replicated: bool,
    /// Per-request CSV log (`--latency-log`), if any.
    pub(crate) latency_log: Option<crate::latency_log::LatencyLog>,
    /// The GC timeline diagnostic ([`crate::SimulationBuilder::gc_timeline`]), if on.
    pub(crate) gc_timeline: Option<Box<crate::gc_timeline::GcTimeline>>,
    /// The host interface (`[host.interface]`), `None` when off (the default).
    pub(crate) hif: Option<Box<hostif::HostIf>>,
    /// Remapping's bookkeeping (`[remap]`), if on.
    pub(crate) remap: Option<Box<crate::remap::RemapTable>>,
    /// The first remap logical page (`u64::MAX` without remapping): transactions of
    /// logical pages at or above it are remapping's.
    pub(crate) remap_base: u64,
    /// RS reallocation's bookkeeping (`sched.mcs.reallocate`), if on.
    pub(crate) realloc: Option<Box<realloc::Realloc>>,
}

impl Simulation {
    pub(crate) fn new(
        cfg: SimConfig,
        device: Device,
        mut ftl: Box<dyn Ftl>,
        placement: Box<dyn Placement>,
        scheduler: Box<dyn TxnScheduler>,
    ) -> Simulation {
        let geo = device.geometry().clone();
        // What the host addresses; under replication the FTL holds more (the copies).
        let mut logical_pages = ftl.host_pages();
        let replicated = ftl.replica(Lpn(0)).is_some();
        let page_size = geo.page_size_bytes();
        // Validated with the config (`SimConfig::check`).
        let hif = cfg.host.interface.resolve().ok().flatten().map(|m| Box::new(hostif::HostIf::new(m)));
        // Remapping reserves the top `remap.pages` logical pages for its copies.
        let remap = cfg.remap.enabled().then(|| {
            logical_pages -= cfg.remap.pages;
            let unit = geo.partial_read_bytes();
            Box::new(crate::remap::RemapTable::new(&cfg.remap, page_size / unit, unit, logical_pages))
        });
        let remap_base = if remap.is_some() { logical_pages } else { u64::MAX };
        let realloc = cfg.sched.mcs.reallocate.then(|| Box::new(realloc::Realloc::new(&cfg.sched.mcs)));
        // `read_page = "current"` keeps its sums only with the FTL's move log.
        let logs_moves =
            placement.uses_pending_sums() && placement.pending_reads_current() && ftl.log_moves();
        Simulation {
            hif,
            host: Host::new(&cfg, logical_pages, page_size),
            ctl: Controller::new(
                &geo,
                placement,
                scheduler,
                ftl.has_translation_reads(),
                ftl.has_write_translation_reads(),
                logs_moves,
            ),
            gc: GcDriver::new(&geo, ftl.logical_pages()),
            verifier: Verifier::new(cfg.host.verify, ftl.logical_pages()),
            warmth: warm::QueueWarmth::new(geo.total_dies() as usize),
            cfg,
            geo,
            device,
            ftl,
            events: EventQueue::default(),
            now: SimTime::ZERO,
            events_processed: 0,
            arrivals_open: false,
            last_op_done: SimTime::ZERO,
            lazy_allowed: true,
            preconditioned: None,
            baseline: None,
            erase_snapshot: None,
            page_size,
            page_math: pages::PageMath::new(page_size as u64),
            logical_pages,
            replicated,
            latency_log: None,
            gc_timeline: None,
            remap,
            remap_base,
            realloc,
        }
    }

    /// The logical pages the host can address.
    pub fn logical_pages(&self) -> u64 {
        self.logical_pages
    }

    /// The write buffer, if configured.
    pub(crate) fn buffer(&self) -> Option<&crate::buffer::WriteBuffer> {
        self.host.buffer.as_ref()
    }

    /// The GC timeline, if the builder asked for one
    /// ([`crate::SimulationBuilder::gc_timeline`]).
    pub fn gc_timeline(&self) -> Option<&crate::gc_timeline::GcTimeline> {
        self.gc_timeline.as_deref()
    }

    /// The simulated present.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Host requests admitted or waiting in the host queue and not yet completed.
    pub fn outstanding(&self) -> usize {
        match &self.hif {
            // Every request is in the interface from its arrival to its completion.
            Some(h) => h.outstanding(),
            None => self.host.reqs.len() + self.host.host_queue.len(),
        }
    }

    /// Record the FTL's and device's counters as the start of the timed run (once).
    fn mark_baseline(&mut self) {
        if self.baseline.is_none() {
            self.ctl.lazy = self.lazy_eligible();
            self.baseline = Some((self.ftl.stats(), *self.device.stats()));
            if self.device.spec().partial_erase_levels().is_some() {
                self.erase_snapshot = Some(crate::wear::EraseSnapshot::take(&self.device));
            }
        }
    }

    /// Replay `trace` to completion.
    pub fn run<I>(&mut self, trace: I) -> Result<(), RunError>
    where
        I: Iterator<Item = Result<IoRequest, crate::trace::TraceError>>,
    {
        self.run_source(crate::trace::Results::new(trace))
    }

    /// [`Simulation::run`] on a [`RequestSource`](crate::trace::RequestSource) (e.g. a
    /// [`TraceReader`](crate::trace::TraceReader)): the same replay, with the requests
    /// taken as plain values rather than as an iterator's `Result`s (faster; see the
    /// trait).
    pub fn run_source<S: crate::trace::RequestSource>(&mut self, trace: S) -> Result<(), RunError> {
        // The statistics may be recorded on a second thread meanwhile; it is joined
        // before `run` returns, error or not (`stats_thread.rs`).
        crate::stats_thread::arm(&mut self.host.stats);
        let replayed = self.replay(trace);
        crate::stats_thread::finish(&mut self.host.stats);
        replayed
    }

    /// [`Simulation::run_source`]'s loop.
    fn replay<S: crate::trace::RequestSource>(&mut self, trace: S) -> Result<(), RunError> {
        self.mark_baseline();
        let mut trace = Lookahead::new(trace);
        let closed = self.cfg.host.mode == HostMode::Closed;
        loop {
            // Next arrival: in closed loop, requests enter only when a slot is free.
            let next_arrival = if closed {
                let outstanding = match &self.hif {
                    Some(h) => h.outstanding() as u32,
                    None => self.host.admitted,
                };
                if outstanding < self.cfg.host.closed_loop_depth {
                    match trace.peek() {
                        Ahead::Request(_) => Some(self.now),
                        Ahead::Error => return Err(trace.take_error().into()),
                        Ahead::End => None,
                    }
                } else {
                    None
                }
            } else {
                match trace.peek() {
                    Ahead::Request(r) => Some(SimTime(r.arrival.as_ns())),
                    Ahead::Error => return Err(trace.take_error().into()),
                    Ahead::End => None,
                }
            };
            if self.arrivals_open && next_arrival.is_none_or(|a| a > self.now) {
                // Time moves on: schedule the requests that arrived at this instant
                // (which may create events before the next arrival).
                self.close_arrivals()?;
            }
            let next_event = self.events.peek_time();
            // Events at the same instant run before arrivals, so completions free slots first.
            let take_event = match (next_event, next_arrival) {
                (Some(e), Some(a)) => e <= a,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            if take_event {
                self.step_event()?;
                // The events due at this same instant run next whatever the trace holds
                // (events at an instant run before its arrivals, and no arrival is
                // earlier than the present): no round of this loop for each of them.
                while self.events.peek_time() == Some(self.now) {
                    self.step_event()?;
                }
            } else {
                if trace.wants_refill() {
                    // Requests that will wait in the host queue are warmed there, nearer
                    // their admission ([`warm::HostQueue`]).
                    let queued = self.arrivals_wait();
                    let ftl = self.ftl.as_ref();
                    let device = &self.device;
                    let qw = &self.host.queued_writes;
                    trace.refill(self.page_math, self.logical_pages, |s| {
                        if !queued {
                            s.prefetch(ftl);
                            ftl.warm_writes(&s.next.writes);
                            // The reads' lookups (their entries now cached) and the
                            // block records their physics checks will read.
                            for &lpn in &s.next.reads {
                                if let Some(ppa) = ftl.lookup(lpn) {
                                    device.prefetch_block(ppa);
                                }
                            }
                            warm::warm_queued_writes(qw, &s.next.writes);
                            warm::warm_queued_writes(qw, &s.next.reads);
                        }
                    });
                }
                let mut r = trace.take();
                if closed {
                    r.arrival = crate::trace::TraceTime(self.now.as_ns());
                }
                self.enter(r)?;
            }
        }
        assert!(self.host.reqs.is_empty(), "{} requests never completed", self.host.reqs.len());
        assert!(self.outstanding() == 0, "{} requests never left the host interface", self.outstanding());
        Ok(())
    }

    /// Offer the dies the work of the requests that arrived at the present instant.
    fn close_arrivals(&mut self) -> Result<(), RunError> {
        if self.arrivals_open {
            self.arrivals_open = false;
            self.ctl.cur_key = after_events_at(self.now);
            self.end_batch(true)?;
            self.after_step()?;
        }
        Ok(())
    }

    /// Process the next event.
    fn step_event(&mut self) -> Result<(), RunError> {
        self.close_arrivals()?;
        let (t, ev) = self.events.pop().expect("an event is pending");
        assert!(t >= self.now, "clock ran backwards: {t} < {}", self.now);
        self.now = t;
        self.ctl.cur_key = self.events.popped_key();
        self.events_processed += 1;
        self.handle(ev)?;
        self.after_step()
    }

    /// What a step (an event, an arrival, the close of an instant's arrivals) leaves to
    /// do: offer idle dies the GC jobs queued on them meanwhile.
    #[inline]
    fn after_step(&mut self) -> Result<(), RunError> {
        if self.ctl.idle_gc.is_empty() { Ok(()) } else { self.wake_idle_gc_dies() }
    }

    /// A request arrives now or later (arrival ≥ now).
    fn enter(&mut self, r: IoRequest) -> Result<(), RunError> {
        let arrival = SimTime(r.arrival.as_ns());
        assert!(arrival >= self.now, "trace arrival {arrival} before now {}", self.now);
        debug_assert!(arrival == self.now || !self.arrivals_open, "batch left open across time");
        self.now = arrival;
        // Requests arrive after every event of their instant.
        self.ctl.cur_key = after_events_at(arrival);
        if !self.arrivals_open {
            // A batching scheduler sees every request arriving at this instant before
            // it forms commands (a request's own pages always form one batch).
            self.arrivals_open = self.begin_batch();
        }
        if self.host.stats.first_arrival.is_none() {
            self.host.stats.first_arrival = Some(arrival);
        }
        self.arrive(r)?;
        self.after_step()
    }

    // ------------------------------------------------------------ stepping API

    /// Submit one host request (open loop: it enters at its arrival time, which must not
    /// be before [`Simulation::now`]). Events due before the arrival are processed first,
    /// exactly as [`Simulation::run`] interleaves them; completions are kept for
    /// [`Simulation::take_completions`].
    pub fn submit(&mut self, r: IoRequest) -> Result<(), RunError> {
        self.mark_baseline();
        self.host.keep_completions = true;
        let arrival = SimTime(r.arrival.as_ns());
        if arrival < self.now {
            return Err(RunError::PastArrival { arrival, now: self.now });
        }
        if arrival > self.now {
            self.close_arrivals()?;
        }
        while self.events.peek_time().is_some_and(|t| t <= arrival) {
            self.step_event()?;
        }
        self.enter(r)
    }

    /// Process every event due at or before `t`, then move the clock to `t` (if later).
    pub fn advance_until(&mut self, t: SimTime) -> Result<(), RunError> {
        self.mark_baseline();
        self.host.keep_completions = true;
        if t >= self.now {
            self.close_arrivals()?;
        }
        while self.events.peek_time().is_some_and(|e| e <= t) {
            self.step_event()?;
        }
        if t > self.now && t != SimTime::MAX {
            self.now = t;
        }
        Ok(())
    }

    /// Process events until none is left (every submitted request completed, the
    /// device idle).
    pub fn drain(&mut self) -> Result<(), RunError> {
        self.advance_until(SimTime::MAX)
    }

    /// When the next event is due, `None` if nothing is pending.
    pub fn next_event_time(&self) -> Option<SimTime> {
        if self.arrivals_open {
            // Requests submitted at the present instant wait to be scheduled together.
            return Some(self.now);
        }
        self.events.peek_time()
    }

    /// Move the requests completed since the last call (in completion order) into `out`.
    /// Only the stepping API keeps completions; [`Simulation::run`] does not.
    pub fn take_completions(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.host.completions);
    }

    fn handle(&mut self, ev: Event) -> Result<(), RunError> {
        match ev {
            Event::OpDone { op } => {
                if self.ctl.ops.get(op).done != self.now {
                    return Ok(()); // stale: the op was suspended and finishes later
                }
                self.op_done(op)
            }
            Event::DramDone { req, pages } => self.dram_done(req, pages),
            Event::Lazy { die } => self.lazy_done(DieId(die)),
            Event::HostIf { slot, step } => self.hif_step(slot, step),
            Event::Recheck => {
                if self.ctl.recheck_at == self.now {
                    self.ctl.recheck_at = SimTime::ZERO;
                }
                self.retry_undecided()
            }
            Event::IdleFlush { epoch } => {
                if epoch == self.host.epoch && self.host.reqs.is_empty() {
                    if let Some(b) = self.host.buffer.as_mut() {
                        b.flush_all(&mut self.host.flushes);
                    }
                    self.enqueue_flushes()?;
                }
                Ok(())
            }
        }
    }

    fn nand(&self, e: NandError) -> RunError {
        RunError::Nand { at: self.now, source: e }
    }

    pub(crate) fn take_versions(&mut self) -> Option<crate::table::LpnTable<u32>> {
        self.verifier.take()
    }

    pub(crate) fn put_versions(&mut self, v: Option<crate::table::LpnTable<u32>>) {
        self.verifier.put(v);
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

/// The replay's window on the trace: up to [`Lookahead::WINDOW`] requests read ahead of
/// the one entering, in batches that pass through the stages of [`warm::Stages`] (the
/// forward map's levels prefetched one refill apart, then the batch warmed whole with
/// [`Ftl::warm_writes`]; speed hints with no effect on state), so that the misses of the
/// requests about to be admitted are paid ahead and overlap, instead of each request's
/// misses stalling its own admission one after another. The requests and their order
/// reach the engine exactly as from the iterator itself; a trace error ends the window
/// (the engine stops at it) and is handed over after every request read before it.
///
/// The window holds plain requests, taken from a [`RequestSource`](crate::trace::RequestSource),
/// not an iterator's `Result`s: moving a `Result<IoRequest, TraceError>` (the request at
/// an offset behind the error's niche) through the window made the copies read 16 bytes
/// across narrower stores that had just been written, which a store buffer cannot
/// forward (docs/performance.md, "Round of 2026-11-29 (third session)" and "Round of
/// 2026-12-03").
struct Lookahead<S> {
    inner: S,
    buf: std::collections::VecDeque<IoRequest>,
    /// The error the trace ended with: due after every request in `buf`.
    err: Option<crate::trace::TraceError>,
    /// The iterator has ended (or failed).
    done: bool,
    /// Pages of the last three refills' requests, a ring: `pages[next]` is refilled
    /// next (its requests have been taken by then).
    pages: [warm::WarmPages; STAGES],
    /// The ring slot the next refill fills.
    next: usize,
}

/// Batches in a [`Lookahead`]'s window, one per stage of [`warm::Stages`].
const STAGES: usize = 3;

/// What comes next through a [`Lookahead`].
enum Ahead<'a> {
    /// A request.
    Request(&'a IoRequest),
    /// The trace's error ([`Lookahead::take_error`]).
    Error,
    /// The end of the trace.
    End,
}

impl<S: crate::trace::RequestSource> Lookahead<S> {
    /// Requests held ahead at most.
    const WINDOW: usize = 48;
    /// Requests read per refill (a refill comes when this many have been taken): a
    /// third of the window, so that the window holds the three batches of
    /// [`warm::Stages`].
    const STEP: usize = Self::WINDOW / STAGES;
    /// Pages warmed per request at most.
    const PAGES_PER_REQUEST: u64 = warm::PAGES_PER_REQUEST;

    fn new(inner: S) -> Self {
        Lookahead {
            inner,
            buf: std::collections::VecDeque::with_capacity(Self::WINDOW),
            err: None,
            done: false,
            pages: std::array::from_fn(|_| {
                warm::WarmPages::with_capacity(Self::WINDOW * Self::PAGES_PER_REQUEST as usize)
            }),
            next: 0,
        }
    }

    /// What comes next, without taking it.
    fn peek(&mut self) -> Ahead<'_> {
        if self.buf.is_empty() && !self.done {
            match self.inner.next_request() {
                Some(r) => self.buf.push_back(r),
                None => self.stop(),
            }
        }
        match self.buf.front() {
            Some(r) => Ahead::Request(r),
            None if self.err.is_some() => Ahead::Error,
            None => Ahead::End,
        }
    }

    /// The source stopped: at its end, or at the error it then holds.
    #[cold]
    fn stop(&mut self) {
        self.err = self.inner.take_error();
        self.done = true;
    }

    /// Take the next request (after [`Lookahead::peek`] saw one).
    #[inline]
    fn take(&mut self) -> IoRequest {
        self.buf.pop_front().expect("a request was peeked")
    }

    /// Take the trace's error (after [`Lookahead::peek`] saw it).
    fn take_error(&mut self) -> crate::trace::TraceError {
        debug_assert!(self.buf.is_empty());
        self.err.take().expect("an error was peeked")
    }

    /// A batch's worth of the window has been taken (and the trace goes on).
    fn wants_refill(&self) -> bool {
        !self.done && self.buf.len() <= Self::WINDOW - Self::STEP
    }

    /// Read ahead to a full window (or the trace's end or error) and hand the pages of
    /// the window's three batches (at most [`Lookahead::PAGES_PER_REQUEST`] per request,
    /// wrapped into the logical space as the host wraps them) to `warm`: the new
    /// requests', and those of the two refills before ([`warm::Stages`]).
    fn refill(&mut self, pages: pages::PageMath, logical_pages: u64, warm: impl FnOnce(warm::Stages<'_>)) {
        let slot = self.next;
        self.next = (slot + 1) % STAGES;
        let new = &mut self.pages[slot];
        new.clear();
        while self.buf.len() < Self::WINDOW && !self.done {
            match self.inner.next_request() {
                Some(r) => {
                    new.push(&r, pages, logical_pages);
                    self.buf.push_back(r);
                }
                None => {
                    // `stop`, inline: `new` borrows the ring meanwhile.
                    self.err = self.inner.take_error();
                    self.done = true;
                }
            }
        }
        // Filled one and two refills before this one.
        let before = |k: usize| &self.pages[(slot + STAGES - k) % STAGES];
        warm(warm::Stages { new: &self.pages[slot], middle: before(1), next: before(2) });
    }
}

#[cfg(test)]
mod lookahead_tests {
    use super::*;
    use crate::trace::{Results, TraceError, TraceTime};

    fn req(i: u64, offset: u64, size: u64) -> Result<IoRequest, TraceError> {
        Ok(IoRequest {
            arrival: TraceTime(i),
            device: 0,
            offset_bytes: offset,
            size_bytes: size,
            op: IoOp::Read,
        })
    }

    /// Everything the window hands over, in order, as text: the requests, then the
    /// error or the end.
    fn drain<S>(la: &mut Lookahead<S>, mut step: impl FnMut(&mut Lookahead<S>)) -> Vec<String>
    where
        S: crate::trace::RequestSource,
    {
        let mut got = Vec::new();
        loop {
            step(la);
            match la.peek() {
                Ahead::Request(_) => got.push(format!("{:?}", Ok::<_, TraceError>(la.take()))),
                Ahead::Error => {
                    got.push(format!("{:?}", Err::<IoRequest, _>(la.take_error())));
                    return got;
                }
                Ahead::End => return got,
            }
        }
    }

    /// The window passes every request through unchanged and in order, and the trace's
    /// error after the requests before it, however the engine interleaves peeks, refills
    /// and takes; refills warm exactly the pages of the requests they read ahead.
    #[test]
    fn passes_items_through_in_order_and_warms_what_it_reads_ahead() {
        let mut items: Vec<Result<IoRequest, TraceError>> =
            (0..100).map(|i| req(i, i * 4096 * 3, 4096 * (1 + i % 40))).collect();
        items[70] = Err(TraceError::Io {
            file: "t".into(),
            source: std::sync::Arc::new(std::io::Error::other("boom")),
        });
        // The engine stops at the error: nothing after it is handed over.
        let expect: Vec<String> = items[..=70].iter().map(|x| format!("{x:?}")).collect();
        for period in [1, 2, 3, 7] {
            let mut la = Lookahead::new(Results::new(items.clone().into_iter()));
            let mut warmed = Vec::new();
            let mut step = 0u64;
            let got = drain(&mut la, |la| {
                step += 1;
                la.peek();
                if step % period != 0 && la.wants_refill() {
                    la.refill(pages::PageMath::new(4096), 1 << 20, |s| {
                        warmed.push([&s.new.writes[..], &s.new.reads].concat())
                    });
                }
            });
            assert_eq!(got, expect, "refill skipped every {period} steps");
            assert!(matches!(la.peek(), Ahead::End), "the error is handed over once");
            if period == 1 {
                continue;
            }
            // The first refill reads requests 1 .. WINDOW - 1 (request 0 was peeked
            // before it): request i covers pages 3i .. 3i + (1 + i % 40) - 1, of which at
            // most PAGES_PER_REQUEST are warmed.
            let first = &warmed[0];
            let mut want = Vec::new();
            type L = Lookahead<Results<std::vec::IntoIter<Result<IoRequest, TraceError>>>>;
            for i in 1..L::WINDOW as u64 {
                let n = (1 + i % 40).min(L::PAGES_PER_REQUEST);
                want.extend((3 * i..3 * i + n).map(Lpn));
            }
            assert_eq!(first, &want);
        }
    }

    /// A trace without an error ends after its last request.
    #[test]
    fn ends_after_the_last_request() {
        let items: Vec<_> = (0..10).map(|i| req(i, i * 4096, 4096)).collect();
        let expect: Vec<String> = items.iter().map(|x| format!("{x:?}")).collect();
        let mut la = Lookahead::new(Results::new(items.into_iter()));
        assert_eq!(drain(&mut la, |la| la.refill(pages::PageMath::new(4096), 1 << 20, |_| ())), expect);
    }

    /// Writes' pages and reads' pages are warmed apart (reads need only their lookups).
    #[test]
    fn warms_writes_and_reads_apart() {
        let mut w = req(1, 8 * 4096, 2 * 4096).unwrap();
        w.op = IoOp::Write;
        let items = vec![req(0, 0, 4096), Ok(w), req(2, 4 * 4096, 4096)];
        let mut la = Lookahead::new(Results::new(items.into_iter()));
        let (mut writes, mut reads) = (Vec::new(), Vec::new());
        la.refill(pages::PageMath::new(4096), 1 << 20, |s| {
            (writes, reads) = (s.new.writes.to_vec(), s.new.reads.to_vec())
        });
        assert_eq!(writes, vec![Lpn(8), Lpn(9)]);
        assert_eq!(reads, vec![Lpn(0), Lpn(4)]);
    }

    /// Each refill hands over the batch it read as `new`, the previous refill's as
    /// `middle` and the one before as `next`; the `next` batch is the one taken before
    /// the following refill, so every request passes the three stages in order before it
    /// is taken.
    #[test]
    fn batches_pass_the_stages_in_order_before_they_are_taken() {
        type L = Lookahead<Results<std::vec::IntoIter<Result<IoRequest, TraceError>>>>;
        let items: Vec<_> = (0..400).map(|i| req(i, i * 4096, 4096)).collect();
        let mut la = Lookahead::new(Results::new(items.into_iter()));
        // Per request (page i = request i): refill count at its new, middle, next stage.
        let mut at = vec![[None; STAGES]; 400];
        let mut refills = 0;
        let mut taken = 0usize;
        loop {
            la.peek();
            if la.wants_refill() {
                refills += 1;
                la.refill(pages::PageMath::new(4096), 1 << 20, |s| {
                    for (k, b) in [s.new, s.middle, s.next].into_iter().enumerate() {
                        for l in b.reads.iter().chain(&b.writes) {
                            assert!(at[l.0 as usize][k].is_none(), "page {l:?} in stage {k} twice");
                            at[l.0 as usize][k] = Some(refills);
                        }
                    }
                });
            }
            match la.peek() {
                Ahead::Request(_) => {
                    let r = la.take();
                    let i = r.arrival.0 as usize;
                    assert_eq!(i, taken, "in order");
                    taken += 1;
                    // Past the first window and before the last batch (the trace's end
                    // stops the refills), every request had all three stages, in order
                    // and one refill apart, before it was taken.
                    if (L::WINDOW..400 - L::STEP).contains(&i) {
                        let [a, b, c] =
                            at[i].map(|x| x.unwrap_or_else(|| panic!("request {i} not staged: {:?}", at[i])));
                        assert!(a + 1 == b && b + 1 == c, "request {i}: refills {a}, {b}, {c}");
                    }
                }
                _ => break,
            }
        }
        assert_eq!(taken, 400);
    }

    #[test]
    fn wraps_pages_beyond_the_logical_space() {
        let mut la =
            Lookahead::new(Results::new(vec![req(0, 0, 4096), req(1, 10 * 4096, 3 * 4096)].into_iter()));
        let mut warmed = Vec::new();
        la.peek();
        la.refill(pages::PageMath::new(4096), 11, |s| {
            warmed.extend([&s.new.writes[..], &s.new.reads].concat())
        });
        assert_eq!(warmed, vec![Lpn(10), Lpn(0), Lpn(1)]);
        assert!(!la.wants_refill(), "the trace has ended");
        assert_eq!(drain(&mut la, |_| ()).len(), 2);
    }
}
