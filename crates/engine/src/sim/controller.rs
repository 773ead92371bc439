//! The flash controller room: transactions, per-die queues, the transaction scheduler
//! and placement policy, operations in flight.
//!
//! The controller decides nothing about queue discipline itself: when a die can take
//! work it asks the configured [`TxnScheduler`] for a [`Decision`] and turns it into
//! device commands. It re-checks every decision against the device's rules (a
//! scheduler's prediction of where a page is, or where the FTL will write, may be out of
//! date): what cannot join the command goes back to its queue, in its place.

use lamina_ftl::{FtlError, WriteConstraint};
use lamina_nand_model::{
    BlockId, ChannelId, Command, DieId, Geometry, Lpn, Nanos, PageAddr, PlaneId, Ppa, SimTime, SomlPart,
    Timing,
};
use lamina_sched::{
    Choice, Class, Decision, DeviceView, DieQueues, PendingEntry, PendingOp, PendingSums, Placement,
    QueuedTxn, Slot, TxnKind, TxnScheduler,
};

use super::{Event, NIL, RunError, Simulation};
use crate::report::{PlacementReport, RedirectReport};
use crate::slab::Slab;
use crate::stats::{Attribution, OpKind, OpMix};

/// Most transactions one flash operation serves (multi-plane width and SOML parts are
/// validated against it).
pub(crate) const MAX_OP_TXNS: usize = crate::config::MAX_COMMAND_TXNS;

/// A flash transaction: one page of a host request, a buffer flush, or the read half of
/// a read-modify-write.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Txn {
    pub(crate) kind: TxnKind,
    pub(crate) lpn: u64,
    /// Owning request (NIL for flushes).
    pub(crate) req: u32,
    pub(crate) die: DieId,
    /// Target plane (writes) or the plane holding the page when queued (reads).
    pub(crate) plane: PlaneId,
    /// Byte range within the page (reads).
    pub(crate) offset: u32,
    pub(crate) len: u32,
    /// Partial page (writes): needs read-modify-write if the page is already mapped.
    pub(crate) partial: bool,
    /// Read-modify-write read: the write waiting for it. Flush: its buffer slot.
    pub(crate) link: u32,
    pub(crate) seq: u64,
    /// When it entered its die's queue, and the die's GC busy time until then (for the
    /// time it spends blocked behind GC).
    enq: SimTime,
    gc_mark: u64,
    /// Spare-area or translation-page reads the FTL's translation step still waits for
    /// (0 = none left), and whether the step is done (reads; host writes under a cached
    /// mapping, [`lamina_ftl::Ftl::translate_write`]).
    pub(super) translating: u8,
    translated: bool,
    /// While its translation reads run: when they were issued (ns); after: how long
    /// they took (the attribution's `translation`); 0 without any.
    translation: u64,
    /// An undecided write whose read-modify-write read is still running (deferring
    /// policies read the old page before placing the write; see
    /// [`Simulation::place_and_push`]).
    rmw_pending: bool,
    /// A host write that reads of its page find in the host's queued writes
    /// (`Host::queued_writes`) while it waits for its program, and whether
    /// it is counted there. It is counted only once it waits (a die queue, the
    /// undecided queue, a refused allocation): a write programmed as it is queued —
    /// most of them — never enters the map (no read can be admitted in between).
    pub(crate) counts_queued: bool,
    counted: bool,
}

impl Txn {
    pub(crate) fn new(
        kind: TxnKind,
        lpn: u64,
        req: u32,
        die: DieId,
        plane: PlaneId,
        offset: u32,
        len: u32,
    ) -> Txn {
        Txn {
            kind,
            lpn,
            req,
            die,
            plane,
            offset,
            len,
            partial: false,
            link: NIL,
            seq: 0,
            enq: SimTime::ZERO,
            gc_mark: 0,
            translating: 0,
            translation: 0,
            translated: false,
            rmw_pending: false,
            counts_queued: false,
            counted: false,
        }
    }

    fn queued(&self, id: u32) -> QueuedTxn {
        QueuedTxn {
            id,
            kind: self.kind,
            req: self.req,
            lpn: Lpn(self.lpn),
            plane: self.plane,
            offset: self.offset,
            len: self.len,
            seq: self.seq,
        }
    }
}

/// What an operation serves when it has no transaction record: one host page read or
/// write without a translation step, issued alone (as it was queued, `push_txn`'s
/// direct path, or from the head of its die's queue). The op keeps what its
/// attribution needs of the record (`Op::enq`, `Op::gc_mark`); the record is freed at
/// issue, or never made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inline {
    /// The op's transactions are records (`txn`, `more`).
    No,
    /// A host read of request `txn`.
    Read,
    /// A host write of request `txn`.
    Write,
}

/// A flash operation in flight: the transactions it serves (none for GC work).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Op {
    pub(crate) die: DieId,
    pub(crate) done: SimTime,
    /// The first transaction (NIL for GC work); with more than one, all of them are in
    /// `Controller::op_txns[more]`. Kept small: the ops in flight stay in L1 cache.
    txn: u32,
    more: u32,
    ntxns: u8,
    /// A spare-area read of the FTL's translation step for the read transaction `txn`
    /// (which is not complete when this op is).
    translation: bool,
    /// A host read or write served without a transaction record ([`Inline`]): `txn`
    /// is then its request.
    inline: Inline,
    /// Where its time went ([`PageTimes`]; `enq` and `gc_mark` for inline ops only).
    times: PageTimes,
}

#[inline]
fn ns32(n: Nanos) -> u32 {
    n.0.min(u32::MAX as u64) as u32
}

/// Bytes of a spare-area (OOB) read of the FTL's translation step: the slice of the
/// spare area where an FTL keeps a page's logical address and sequence number.
pub(crate) const SPARE_READ_BYTES: u32 = 64;

/// The phase times of a command that the attribution of its transactions needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Phases {
    start: SimTime,
    transfer: Nanos,
    array: Nanos,
}

impl Phases {
    pub(crate) fn of(t: &lamina_nand_model::OpTiming) -> Phases {
        Phases {
            start: t.start,
            transfer: t.bus_end.saturating_since(t.start) + t.data_out_end.saturating_since(t.data_out_start),
            array: t.array_end.saturating_since(t.array_start),
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum PeKind {
    #[default]
    Program,
    Erase,
}

/// The controller's state of one die.
pub(crate) struct DieCtl {
    pub(crate) queues: DieQueues,
    /// Operations issued on this die whose completion the controller has not processed
    /// yet. The die's busy time is the device's; this only orders completions before new
    /// work, as a controller waits for a die's ready signal.
    pub(crate) unfinished: u32,
    /// Host writes bound to this die that wait for their read-modify-write read (which
    /// may run on another die), FCFS. They count as this die's pending work.
    pub(crate) parked: Vec<u32>,
    /// The program/erase op currently running (for suspension bookkeeping).
    pub(crate) pe_op: u32,
    /// Whether `pe_op` is an erase (else a program).
    pe_kind: PeKind,
    /// Pages programmed on the die (host and GC), for placement policies.
    pub(crate) writes_done: u64,
    /// The head write found its plane out of free pages: writes wait until an operation
    /// of this die completes (GC frees space) instead of being retried at once.
    pub(crate) write_stalled: bool,
    /// GC busy time of the die: the total of its GC operations before the latest, and
    /// the latest's span (GC operations of a die run one after another).
    gc_before: u64,
    gc_last: (SimTime, SimTime),
    /// The die's last lazily completed host page ([`LazyOp`]; key 0 = none).
    pub(crate) lazy: LazyOp,
}

/// A host page served alone on its die (no other operation in flight there) whose
/// completion is not an event unless something needs it ("lazy completion",
/// docs/performance.md): its operation has no record, and its completion is an event
/// only if work is queued on its die (already when it is issued, or before it
/// completes) or its request completes with it. The die counts as busy until the key
/// its completion event would have had (`Controller::cur_key` compares), which keeps
/// the order of everything else exactly as with the event.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LazyOp {
    /// The key (`EventQueue::reserve`) of its completion: `(done << 64) | sequence`.
    pub(crate) key: u128,
    /// Its request.
    pub(crate) req: u32,
    /// Whether its completion event was scheduled (`Event::Lazy`).
    pub(crate) pushed: bool,
    /// What its [`Op`] would hold for the latency attribution.
    times: PageTimes,
}

/// Where an operation's time went, for the latency attribution of what it serves.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PageTimes {
    /// When it was issued.
    issued: SimTime,
    /// Inline ops: when the transaction entered its die's queue and the die's GC busy
    /// time until then ([`Txn`]'s `enq` and `gc_mark`).
    enq: SimTime,
    gc_mark: u64,
    /// The device's start (ns after issue), bus and array time, and time added by reads
    /// suspending it (ns, saturating at 4.29 s).
    start_after: u32,
    transfer: u32,
    array: u32,
    suspended: u32,
}

impl DieCtl {
    /// The transactions counted in the die's pending sums: its queued reads and writes
    /// and its parked writes.
    fn pending_ids(&self) -> impl Iterator<Item = u32> + '_ {
        let q = &self.queues;
        q.reads.iter().chain(q.writes.iter()).map(|t| t.id).chain(self.parked.iter().copied())
    }

    /// Busy with an operation whose completion has not been processed at `cur` (the key
    /// of the present point in the order of events: `Controller::cur_key`).
    #[inline]
    pub(crate) fn busy(&self, cur: u128) -> bool {
        self.unfinished != 0 || self.lazy.key > cur
    }

    /// GC busy time of the die up to `t`.
    fn gc_busy_until(&self, t: SimTime) -> u64 {
        let (s, e) = self.gc_last;
        self.gc_before + t.min(e).saturating_since(s).0
    }

    /// The time (ns) a transaction queued at `enq`, when the die's GC mark was
    /// `gc_mark`, and issued at `issued` spent blocked behind the die's GC: the latency
    /// attribution's `gc_blocked` (at most its wait in the queue).
    fn gc_blocked(&self, issued: SimTime, gc_mark: u64, enq: SimTime) -> u64 {
        self.gc_busy_until(issued).saturating_sub(gc_mark).min(issued.saturating_since(enq).0)
    }
}

/// Counters of the controller layer: transactions by kind and what became of them.
/// (Pages programmed, moved and erased are the FTL's and the device's counters.)
#[derive(Default, Clone, Copy, Debug)]
pub struct FlashCounters {
    /// Pages read for the host.
    pub host_reads: u64,
    /// Pages read by GC (not counting copyback).
    pub gc_reads: u64,
    /// Read-modify-write reads.
    pub rmw_reads: u64,
    /// Reads re-queued because GC or a write moved their page to another die.
    pub read_redirects: u64,
    /// Host writes moved off a plane whose pages all hold valid data (nothing for GC to
    /// reclaim) to the next plane with free blocks.
    pub full_plane_redirects: u64,
    /// Host writes the FTL refused (no free page, merge needed) that waited for GC on
    /// their plane and were retried.
    pub write_retries: u64,
    /// Multi-plane programs the scheduler planned that the FTL's allocation broke up
    /// (pages not at one block and page offset).
    pub misaligned_groups: u64,
    /// Spare-area reads issued for the FTL's translation step (NFTL-style lookups).
    pub translation_reads: u64,
    /// Die time of those reads (each from its first bus phase to its completion).
    pub translation_read_ns: u64,
    /// Host page reads served by the mirror copy (RAIN 1, `ftl.replication`).
    pub mirror_reads: u64,
}

/// Read transactions waiting in the dies' read queues (all dies), integrated over
/// simulated time: the report's mean read-queue length per die (soml-read Fig. 10a).
/// Updated at every push to or removal from a read queue, never per event.
#[derive(Default, Clone, Copy, Debug)]
pub struct ReadQueueArea {
    /// Reads queued now.
    pub queued: u64,
    /// When `queued` last changed.
    pub since: SimTime,
    /// Σ queued × time, in transaction·ns, up to `since`.
    pub area: u128,
}

impl ReadQueueArea {
    #[inline]
    fn settle(&mut self, now: SimTime) {
        self.area += u128::from(self.queued) * u128::from(now.saturating_since(self.since).0);
        self.since = now;
    }

    /// `n` reads joined a queue at `now`.
    #[inline]
    pub fn added(&mut self, now: SimTime, n: u64) {
        self.settle(now);
        self.queued += n;
    }

    /// `n` reads left a queue at `now`.
    #[inline]
    pub fn removed(&mut self, now: SimTime, n: u64) {
        self.settle(now);
        self.queued -= n;
    }

    /// The area up to `end` (≥ every change).
    pub fn area_until(&self, end: SimTime) -> u128 {
        self.area + u128::from(self.queued) * u128::from(end.saturating_since(self.since).0)
    }
}

/// Counters of write placement decisions (the report's `placement` section): how many
/// sub-writes a deferring policy (`dynamic`, `uq`) left undecided, how long they
/// waited, and what the device looked like at each recheck that bound nothing.
/// Incremented only where a decision is made or retried, never per event.
#[derive(Default, Clone, Copy, Debug)]
pub struct PlacementCounters {
    /// Calls to the placement policy (one per sub-write placed at once, one per try of
    /// the undecided queue's head).
    pub decisions: u64,
    /// Sub-writes that entered the undecided queue.
    pub deferred: u64,
    /// Sub-writes bound after waiting in the undecided queue, and their total and
    /// longest wait there, in ns.
    pub bound_after_wait: u64,
    /// Total time bound sub-writes spent undecided, in ns.
    pub undecided_wait_ns: u64,
    /// Longest time one sub-write spent undecided, in ns.
    pub undecided_wait_max_ns: u64,
    /// Retries of the undecided queue (operation completions, channel releases) that
    /// found it non-empty.
    pub rechecks: u64,
    /// Rechecks that bound nothing.
    pub rechecks_empty: u64,
    /// Rechecks that bound nothing although some die was idle.
    pub rechecks_empty_idle_die: u64,
    /// Summed over rechecks that bound nothing: idle dies whose channel was busy.
    pub idle_dies_channel_busy: u64,
    /// Summed over rechecks that bound nothing: idle dies whose channel was idle too
    /// (the policy declined a die UQ's rule accepts: `dynamic`'s chip tokens can).
    pub idle_dies_channel_idle: u64,
    /// Idle-die time while writes were undecided, in die·ns: at each recheck, the idle
    /// dies counted at the previous recheck × the time since it. Sampled at rechecks
    /// (every completion and channel release while writes wait), so a die that a read
    /// made busy between two rechecks counts as idle until the second.
    pub idle_die_ns: u64,
    /// The part of `idle_die_ns` whose die's channel was busy at the sample.
    pub idle_die_ns_channel_busy: u64,
    /// Time the undecided queue was non-empty, in ns (from the first deferral to the
    /// recheck that emptied it, summed).
    pub undecided_ns: u64,
    /// Time and (idle dies, of them on a busy channel) at the last recheck that left
    /// writes undecided (`None` once the queue is empty).
    last_sample: Option<(SimTime, u32, u32)>,
}

/// [`DeviceView::pending_sums`] kept up to date: every transaction that enters a die's
/// read or write queue or its parked writes adds its [`PendingEntry`] to that die's sums
/// ([`Simulation::pend_add`]), and takes the same entry off when it leaves
/// ([`Simulation::pend_remove`]). Debug builds check the sums against a scan of the
/// queues at every use (`lamina_sched::lacr::scan_unless_kept`).
pub(crate) struct PendingTrack {
    /// Per transaction id: the die (+ 1; 0 = not pending) and the entry it added.
    entries: Vec<(u32, PendingEntry)>,
    dies: Vec<PendingSums>,
    /// Under `read_page = "current"` ([`Placement::pending_reads_current`]): what keeps
    /// the reads' entries at their pages' current mapping ([`Simulation::pend_sync`]).
    current: Option<Box<CurrentReads>>,
}

/// The queued reads by logical page and scratch for [`Simulation::pend_sync`].
#[derive(Default)]
struct CurrentReads {
    reads: super::current::ReadsByLpn,
    /// Pages the FTL's move log named.
    moved: Vec<Lpn>,
    /// Transactions to refresh.
    ids: Vec<u32>,
}

/// The controller room.
pub(crate) struct Controller {
    pub(crate) txns: Slab<Txn>,
    pub(crate) ops: Slab<Op>,
    /// The transactions of operations serving more than one (see [`Op::more`]).
    op_txns: Slab<[u32; MAX_OP_TXNS]>,
    pub(crate) dies: Vec<DieCtl>,
    scheduler: Box<dyn TxnScheduler>,
    /// The scheduler's [`TxnScheduler::serves_lone_head`] (asked once).
    lone_head: bool,
    /// The scheduler's [`TxnScheduler::serves_lone_single`] (asked once; implied by
    /// `lone_head`).
    lone_single: bool,
    /// The scheduler's [`TxnScheduler::head_rule`] (asked once): applied here instead of
    /// calling `pick_head`.
    head_rule: Option<lamina_sched::HeadRule>,
    /// The scheduler's [`TxnScheduler::batches`] (asked once).
    batches: bool,
    /// The FTL's [`lamina_ftl::Ftl::has_translation_reads`] (asked once).
    ftl_translates: bool,
    /// The FTL's [`lamina_ftl::Ftl::has_write_translation_reads`] (asked once).
    write_translates: bool,
    placement: Box<dyn Placement>,
    /// The placement's [`Placement::is_static`] (asked once).
    static_placement: bool,
    /// The per-die sums of pending work, kept if the placement reads them
    /// ([`Placement::uses_pending_sums`]: OCR, LaCR and MCS), except under
    /// `read_page = "current"` with an FTL that keeps no move log.
    pub(super) pending: Option<PendingTrack>,
    decision: Decision,
    /// Host writes and flushes whose placement the policy deferred, FCFS.
    undecided: std::collections::VecDeque<Txn>,
    /// Undecided writes still waiting for their read-modify-write read.
    undecided_reading: u32,
    /// Time of the pending `Recheck` event (ZERO if none).
    pub(crate) recheck_at: SimTime,
    /// Arrival order of transactions and GC jobs.
    pub(crate) seq: u64,
    /// Where the simulation is in the order of events: the key of the event being
    /// processed, or, while requests arrive, a key after every event of the present
    /// instant. A lazily completed page's die is busy while its key is later.
    pub(crate) cur_key: u128,
    /// Host pages served alone on idle dies complete lazily ([`LazyOp`]); decided when
    /// the timed run starts ([`Simulation::lazy_eligible`]).
    pub(crate) lazy: bool,
    pub(crate) counters: FlashCounters,
    /// Queued reads over time.
    pub(crate) read_queue: ReadQueueArea,
    /// Placement decisions and the undecided queue.
    pub(crate) placement_counters: PlacementCounters,
    /// Flash commands by kind and width.
    pub(crate) op_mix: OpMix,
    /// While a request (or a batch of flushes) is being queued for a batching
    /// scheduler: the dies that received transactions, in first-touch order, to be
    /// offered their work once the whole batch is queued.
    deferring: bool,
    deferred: Vec<DieId>,
    deferred_mark: Vec<bool>,
    /// Dies that were idle when a GC job was queued on them from outside their own
    /// completions (another die's write, a translation's write-back): nothing else would
    /// offer them the job, so they are dispatched once the present step ends
    /// ([`Simulation::wake_idle_gc_dies`]).
    pub(super) idle_gc: Vec<DieId>,
    /// Admission's lookup of the read being pushed: its logical page, where it was
    /// mapped and the FTL's [`lamina_ftl::Ftl::lookup_epoch`] then. The read's issue uses
    /// it instead of a second lookup while the epoch reads the same (taken by the next
    /// [`Simulation::try_direct_read`] either way).
    pub(super) read_hint: Option<(u64, Ppa, u64)>,
    /// Per chip: the last instant a command was issued on it and on which die.
    chip_last_issue: Vec<(SimTime, u32)>,
    /// Scratch buffers (kept to avoid allocating per command).
    addrs: Vec<PageAddr>,
    ids: Vec<u32>,
    ppas: Vec<Ppa>,
    parts: Vec<SomlPart>,
}

impl Controller {
    /// The transaction scheduler.
    pub(crate) fn scheduler(&self) -> &dyn TxnScheduler {
        self.scheduler.as_ref()
    }

    /// The transaction scheduler, mutably.
    pub(crate) fn scheduler_mut(&mut self) -> &mut dyn TxnScheduler {
        self.scheduler.as_mut()
    }

    pub(crate) fn new(
        geo: &Geometry,
        placement: Box<dyn Placement>,
        scheduler: Box<dyn TxnScheduler>,
        ftl_translates: bool,
        write_translates: bool,
        ftl_logs_moves: bool,
    ) -> Controller {
        // Under `read_page = "current"` the sums can be kept only with the FTL's move log.
        let current = placement.pending_reads_current();
        let keep = placement.uses_pending_sums() && (!current || ftl_logs_moves);
        let mut dies = Vec::with_capacity(geo.total_dies() as usize);
        dies.resize_with(geo.total_dies() as usize, || DieCtl {
            queues: DieQueues::default(),
            unfinished: 0,
            parked: Vec::new(),
            pe_op: NIL,
            pe_kind: PeKind::Program,
            writes_done: 0,
            write_stalled: false,
            gc_before: 0,
            gc_last: (SimTime::ZERO, SimTime::ZERO),
            lazy: LazyOp::default(),
        });
        Controller {
            txns: Slab::default(),
            ops: Slab::default(),
            op_txns: Slab::default(),
            dies,
            lone_head: scheduler.serves_lone_head(),
            lone_single: scheduler.serves_lone_single() || scheduler.serves_lone_head(),
            head_rule: scheduler.head_rule(),
            batches: scheduler.batches(),
            ftl_translates,
            write_translates,
            scheduler,
            static_placement: placement.is_static(),
            pending: keep.then(|| PendingTrack {
                entries: Vec::new(),
                dies: vec![PendingSums::default(); geo.total_dies() as usize],
                current: current.then(Box::default),
            }),
            placement,
            decision: Decision::default(),
            undecided: std::collections::VecDeque::new(),
            undecided_reading: 0,
            recheck_at: SimTime::ZERO,
            seq: 0,
            cur_key: 0,
            lazy: false,
            counters: FlashCounters::default(),
            read_queue: ReadQueueArea::default(),
            placement_counters: PlacementCounters::default(),
            op_mix: OpMix::default(),
            deferring: false,
            read_hint: None,
            deferred: Vec::new(),
            deferred_mark: vec![false; geo.total_dies() as usize],
            idle_gc: Vec::new(),
            chip_last_issue: vec![(SimTime::MAX, u32::MAX); geo.total_chips() as usize],
            addrs: Vec::new(),
            ids: Vec::new(),
            ppas: Vec::new(),
            parts: Vec::new(),
        }
    }

    #[inline]
    pub(crate) fn next_seq(&mut self) -> u64 {
        let s = self.seq;
        self.seq += 1;
        s
    }
}

/// The engine's state as policies see it (see [`DeviceView`]).
struct View<'a> {
    geo: &'a Geometry,
    device: &'a lamina_nand_model::Device,
    ftl: &'a dyn lamina_ftl::Ftl,
    dies: &'a [DieCtl],
    txns: &'a Slab<Txn>,
    page_size: u32,
    now: SimTime,
    /// `Controller::cur_key`.
    cur: u128,
    /// `Controller::pending`'s sums per die.
    pending: Option<&'a [PendingSums]>,
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
        !d.busy(self.cur) && d.parked.is_empty() && self.device.is_die_idle(die, self.now)
    }
    fn channel_idle(&self, channel: ChannelId) -> bool {
        self.device.is_channel_idle(channel, self.now)
    }
    fn die_free_at(&self, die: DieId) -> SimTime {
        self.device.die_free_at(die).max(self.now)
    }
    fn die_queue_len(&self, die: DieId) -> u32 {
        let d = &self.dies[die.idx()];
        (d.queues.reads.len() + d.queues.writes.len() + d.parked.len()) as u32
    }
    fn for_each_pending(&self, die: DieId, f: &mut dyn FnMut(PendingOp)) {
        for t in self.dies[die.idx()].pending_ids() {
            f(pending_op(self.txns.get(t), self.ftl, self.geo, self.page_size));
        }
    }
    fn pending_sums(&self, die: DieId) -> Option<&PendingSums> {
        self.pending.map(|p| &p[die.idx()])
    }
    fn die_gc_active(&self, die: DieId) -> bool {
        !self.dies[die.idx()].queues.gc.is_empty()
    }
    fn die_writes(&self, die: DieId) -> u64 {
        self.dies[die.idx()].writes_done
    }
    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        self.ftl.next_write_page(plane)
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        self.ftl.lookup(lpn)
    }
    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)> {
        self.ftl.next_write_addr(plane)
    }
    fn ftl_picks_plane(&self, die: DieId) -> bool {
        let _ = die;
        self.ftl.write_constraint(Lpn(0)) == WriteConstraint::Die
    }
    fn die_row_room(&self, die: DieId) -> u32 {
        let ppd = self.geo.planes_per_die();
        match self.ftl.next_write_addr(self.geo.plane_of_die(die, 0)) {
            Some((block, _)) if self.ftl.write_constraint(Lpn(0)) == WriteConstraint::Die => {
                ppd - self.geo.plane_index_in_die(self.geo.plane_of_block(block))
            }
            _ => 1,
        }
    }
}

/// Pending transaction `tx` as placements see it: a read's page is the one its logical
/// page is mapped to now, a write's is not allocated yet.
fn pending_op(tx: &Txn, ftl: &dyn lamina_ftl::Ftl, geo: &Geometry, page_size: u32) -> PendingOp {
    let is_read = tx.kind.is_read();
    let page = if is_read { ftl.lookup(Lpn(tx.lpn)).map(|p| geo.addr(p).page) } else { None };
    let bytes = if tx.kind == TxnKind::Read { tx.len } else { page_size };
    PendingOp { is_read, bytes, page, plane: tx.plane }
}

/// [`Simulation::pend_remove`] with the sums kept.
#[inline(never)]
fn pend_remove_kept(p: &mut PendingTrack, id: u32) {
    let (die, e) = std::mem::take(&mut p.entries[id as usize]);
    debug_assert!(die != 0, "transaction {id} taken off the pending sums but never added");
    if die != 0 {
        p.dies[(die - 1) as usize].remove(&e);
    }
    if let Some(c) = p.current.as_mut() {
        c.reads.remove(id);
    }
}

/// Count host write `t` in `queued` (the host's queued writes) if it should be and is
/// not yet ([`Txn::counts_queued`]).
#[inline]
fn count_queued(queued: &mut super::queued::QueuedWrites, t: &mut Txn) {
    if t.counts_queued && !t.counted && t.kind == TxnKind::Write {
        t.counted = true;
        queued.add(t.lpn);
    }
}

/// Remove the queue entries at `picks` (distinct positions) and return their ids in
/// `picks` order into `out`.
fn take_picks(q: &mut std::collections::VecDeque<QueuedTxn>, picks: &[u32], out: &mut Vec<u32>) {
    out.clear();
    if picks == [0] {
        out.push(q.pop_front().expect("picked position in range").id);
        return;
    }
    if picks.len() == 1 {
        let t = q.remove(picks[0] as usize).expect("picked position in range");
        out.push(t.id);
        return;
    }
    out.extend(picks.iter().map(|&p| q[p as usize].id));
    let mut sorted: [u32; MAX_OP_TXNS] = [0; MAX_OP_TXNS];
    let n = picks.len().min(MAX_OP_TXNS);
    sorted[..n].copy_from_slice(&picks[..n]);
    sorted[..n].sort_unstable();
    for &p in sorted[..n].iter().rev() {
        q.remove(p as usize);
    }
}

impl Simulation {
    // ------------------------------------------------------------------ placement

    /// The next `pages` sub-writes placed form one request (or one batch of buffer
    /// flushes): tell the placement policy (`mcs` places a request as a whole).
    #[inline]
    pub(super) fn begin_placement_request(&mut self, pages: u32) {
        // Static placement keeps no state (`Placement::is_static`): no call.
        if !self.ctl.static_placement {
            self.ctl.placement.begin_request(pages);
        }
    }

    /// A host read of `pages` pages from `first_lpn` arrived: tell the placement policy
    /// (`mcs` marks the areas of long reads read-intensive, MBM's RS).
    #[inline]
    pub(super) fn note_read_for_placement(&mut self, first_lpn: u64, pages: u32) {
        if !self.ctl.static_placement {
            self.ctl.placement.note_read(Lpn(first_lpn), pages);
        }
    }

    /// Ask the placement policy for a plane; `None` = undecided (deferred). An FTL that
    /// constrains the LPN to one plane (NFTL's in-place offsets) overrides the policy.
    #[inline]
    fn place(&mut self, lpn: u64) -> Option<PlaneId> {
        if let WriteConstraint::Plane(p) = self.ftl.write_constraint(Lpn(lpn)) {
            return Some(p);
        }
        let static_plane = self.ftl.static_plane(Lpn(lpn));
        self.ctl.placement_counters.decisions += 1;
        if self.ctl.static_placement {
            // What the static policy answers, without building its device view.
            return Some(static_plane);
        }
        self.place_by_policy(lpn, static_plane)
    }

    /// [`Self::place`] by a policy other than static placement (out of line, so that the
    /// static path stays small enough to inline).
    #[inline(never)]
    fn place_by_policy(&mut self, lpn: u64, static_plane: PlaneId) -> Option<PlaneId> {
        self.pend_sync();
        let view = View {
            geo: &self.geo,
            device: &self.device,
            ftl: self.ftl.as_ref(),
            dies: &self.ctl.dies,
            txns: &self.ctl.txns,
            page_size: self.page_size,
            now: self.now,
            cur: self.ctl.cur_key,
            pending: self.ctl.pending.as_ref().map(|p| &p.dies[..]),
        };
        let plane = self.ctl.placement.place_write(Lpn(lpn), static_plane, &view)?;
        assert!(plane.0 < self.geo.total_planes(), "placement returned plane {} out of range", plane.0);
        Some(plane)
    }

    /// Queue a host write or flush at the plane the placement policy picks, or in the
    /// undecided FCFS queue if it defers (or if older writes are still undecided).
    ///
    /// Under a deferring policy (`dynamic`, `uq`) a write that needs a read-modify-write
    /// reads its old page *before* it is placed and waits undecided until the read is
    /// done: its data is not complete before then, so binding it to a die would hold
    /// that die (idle, but reserved for the write) for as long as the read waits on the
    /// old page's die. (Placing first and parking the write there left dies idle under
    /// load: issue #10, docs/policies.md "Read-modify-write and deferred writes".)
    pub(super) fn place_and_push(&mut self, mut t: Txn) -> Result<(), RunError> {
        let pre_read = self.cfg.sched.placement.may_defer() && self.needs_rmw(&t);
        // Placed at once unless an older undecided write may go first: every undecided
        // write is waiting for its read (none of the same page).
        let nothing_ahead = self.ctl.undecided.is_empty()
            || (self.ctl.undecided.len() == self.ctl.undecided_reading as usize
                && !self.ctl.undecided.iter().any(|o| o.lpn == t.lpn));
        if !pre_read
            && nothing_ahead
            && let Some(plane) = self.place(t.lpn)
        {
            t.plane = plane;
            t.die = self.geo.die_of_plane(plane);
            return self.push_txn(&mut t);
        }
        self.defer_write(t, pre_read)
    }

    /// Put host write or flush `t` in the undecided FCFS queue (`pre_read`: it first
    /// reads its old page, [`Self::place_and_push`]).
    #[inline(never)]
    fn defer_write(&mut self, mut t: Txn, pre_read: bool) -> Result<(), RunError> {
        self.count_queued_write(&mut t);
        // `enq` is set again when the write is bound; until then it is the instant the
        // write became undecided.
        t.enq = self.now;
        self.ctl.placement_counters.deferred += 1;
        if pre_read {
            t.partial = false;
            t.rmw_pending = true;
            self.ctl.undecided_reading += 1;
        }
        self.ctl.undecided.push_back(t);
        if self.ctl.undecided.len() == 1 {
            self.sample_undecided();
        }
        if pre_read {
            self.start_pre_read(t)?;
        }
        self.schedule_recheck();
        Ok(())
    }

    /// Queue the read-modify-write read of undecided write `t` on its old page's die
    /// (`link = NIL`: no die holds the write; [`Self::pre_read_done`] readies it).
    ///
    /// The read belongs to no request (`req = NIL`): pre-reads of one page are
    /// interchangeable — each readies the oldest waiting write of the page — and when
    /// two of them wait on different dies (the page moved between them) they may end out
    /// of order, so the write readied first may complete before the other read is even
    /// issued; that read must not refer to a finished request.
    fn start_pre_read(&mut self, t: Txn) -> Result<(), RunError> {
        let old = self.ftl.lookup(Lpn(t.lpn)).expect("needs_rmw checked the mapping");
        let plane = self.geo.plane_of_ppa(old);
        let die = self.geo.die_of_plane(plane);
        let mut rmw =
            Txn { kind: TxnKind::RmwRead, link: NIL, req: NIL, die, plane, rmw_pending: false, ..t };
        self.push_txn(&mut rmw)
    }

    /// The pre-placement read of an undecided write of `lpn` is done: the oldest such
    /// write becomes placeable; try the queue.
    fn pre_read_done(&mut self, lpn: u64) -> Result<(), RunError> {
        let w = self
            .ctl
            .undecided
            .iter_mut()
            .find(|w| w.rmw_pending && w.lpn == lpn)
            .expect("an undecided write waits for this read-modify-write read");
        w.rmw_pending = false;
        self.ctl.undecided_reading -= 1;
        self.retry_undecided()
    }

    /// The position of the oldest undecided write that may be placed now: not waiting
    /// for its read-modify-write read, and no older write of the same page waiting for
    /// one (writes of one page keep their order).
    fn next_placeable(&self) -> Option<usize> {
        let q = &self.ctl.undecided;
        let mut i = 0;
        while i < q.len() {
            let w = &q[i];
            if !w.rmw_pending && !q.iter().take(i).any(|o| o.rmw_pending && o.lpn == w.lpn) {
                return Some(i);
            }
            i += 1;
        }
        None
    }

    /// Bind undecided writes, oldest first, while the policy accepts them.
    pub(super) fn retry_undecided(&mut self) -> Result<(), RunError> {
        if self.ctl.undecided.is_empty() {
            return Ok(());
        }
        self.ctl.placement_counters.rechecks += 1;
        let mut bound = 0u64;
        while let Some(i) = self.next_placeable() {
            let t = self.ctl.undecided[i];
            let Some(plane) = self.place(t.lpn) else { break };
            self.ctl.undecided.remove(i);
            let c = &mut self.ctl.placement_counters;
            let wait = self.now.saturating_since(t.enq).0;
            c.bound_after_wait += 1;
            c.undecided_wait_ns += wait;
            c.undecided_wait_max_ns = c.undecided_wait_max_ns.max(wait);
            bound += 1;
            self.push_txn(&mut Txn { plane, die: self.geo.die_of_plane(plane), ..t })?;
        }
        let (idle, idle_busy_channel) = self.sample_undecided();
        if bound == 0 {
            let c = &mut self.ctl.placement_counters;
            c.rechecks_empty += 1;
            c.rechecks_empty_idle_die += u64::from(idle > 0);
            c.idle_dies_channel_busy += u64::from(idle_busy_channel);
            c.idle_dies_channel_idle += u64::from(idle - idle_busy_channel);
        }
        self.schedule_recheck();
        Ok(())
    }

    /// The report's `rs` section (the `mbm` scheduler only).
    /// The FTL allocates host rows (die-aligned allocation): the report gets `rows`.
    pub(crate) fn die_aligned_rows(&self) -> bool {
        let f = &self.cfg.ftl;
        (f.kind == lamina_ftl::FtlKind::Mbm && f.mbm_ws) || f.allocation == lamina_ftl::Allocation::DieAligned
    }

    pub(crate) fn rs_report(&self) -> Option<lamina_sched::RsCounters> {
        self.ctl.scheduler.rs_counters()
    }

    /// The report's `placement` section.
    pub(crate) fn placement_report(&self) -> PlacementReport {
        let c = &self.ctl.placement_counters;
        let div = |a: u64, b: u64| a.checked_div(b).unwrap_or(0);
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        let redirect = self.ctl.placement.redirect_counters().map(|r| RedirectReport {
            decisions: r.decisions,
            choice_differs: r.choice_differs,
            ties: r.ties,
            zero_estimate: r.zero_estimate,
            estimate_mean_ns: div(r.estimate_ns, r.decisions),
            estimate_gap_mean_ns: div(r.estimate_gap_ns, r.decisions),
            differing_gain_mean_ns: div(r.differing_gain_ns, r.choice_differs),
        });
        PlacementReport {
            mcs: self.ctl.placement.mcs_counters().map(|mut m| {
                if let Some(r) = self.realloc.as_ref() {
                    m.realloc_requests = r.requests;
                    m.realloc_pages = r.moved;
                    m.realloc_skipped = r.skipped;
                    m.realloc_skipped_queue_full = r.skipped_queue_full;
                    m.realloc_skipped_no_target = r.skipped_no_target;
                    m.realloc_skipped_stale = r.skipped_stale;
                }
                m
            }),
            decisions: c.decisions,
            deferred: c.deferred,
            undecided_wait_mean_ns: div(c.undecided_wait_ns, c.bound_after_wait),
            undecided_wait_max_ns: c.undecided_wait_max_ns,
            rechecks: c.rechecks,
            rechecks_empty: c.rechecks_empty,
            rechecks_empty_idle_die: c.rechecks_empty_idle_die,
            idle_dies_channel_busy: c.idle_dies_channel_busy,
            idle_dies_channel_idle: c.idle_dies_channel_idle,
            idle_dies_while_undecided: ratio(c.idle_die_ns, c.undecided_ns),
            idle_channel_busy_share: ratio(c.idle_die_ns_channel_busy, c.idle_die_ns),
            redirect,
        }
    }

    /// Charge the idle-die time since the last sample and take a new one (while writes
    /// are undecided); returns (idle dies, of them on a busy channel) now. O(dies): runs
    /// only at rechecks and when the undecided queue fills from empty.
    fn sample_undecided(&mut self) -> (u32, u32) {
        let (mut idle, mut on_busy) = (0u32, 0u32);
        for d in 0..self.geo.total_dies() {
            let die = DieId(d);
            if self.die_idle_now(die) {
                idle += 1;
                on_busy += u32::from(!self.device.is_channel_idle(self.geo.channel_of_die(die), self.now));
            }
        }
        let c = &mut self.ctl.placement_counters;
        if let Some((at, i, b)) = c.last_sample {
            let dt = self.now.saturating_since(at).0;
            c.undecided_ns += dt;
            c.idle_die_ns += dt * u64::from(i);
            c.idle_die_ns_channel_busy += dt * u64::from(b);
        }
        c.last_sample = if self.ctl.undecided.is_empty() { None } else { Some((self.now, idle, on_busy)) };
        (idle, on_busy)
    }

    /// With writes undecided, wake up when the next busy channel frees (die idleness
    /// is already signalled by operation completions).
    fn schedule_recheck(&mut self) {
        if self.ctl.undecided.is_empty() {
            return;
        }
        let mut next = SimTime::MAX;
        for c in 0..self.geo.channels() {
            let t = self.device.channel_free_at(ChannelId(c), self.now);
            if t > self.now && t < next {
                next = t;
            }
        }
        if next != SimTime::MAX && (self.ctl.recheck_at <= self.now || next < self.ctl.recheck_at) {
            self.ctl.recheck_at = next;
            self.events.push(next, Event::Recheck);
        }
    }

    // ------------------------------------------------------------------ queues

    /// Queue transaction `t` on its die (stamping its sequence number, queueing time and
    /// GC mark into it), or issue it at once when the die is free. By reference: passed by
    /// value, the caller's freshly placed `t` was copied in 16-byte loads over its new
    /// 4-byte plane and die, which the store buffer cannot forward (docs/performance.md,
    /// tenth session).
    pub(super) fn push_txn(&mut self, t: &mut Txn) -> Result<(), RunError> {
        t.seq = self.ctl.next_seq();
        t.enq = self.now;
        t.gc_mark = self.ctl.dies[t.die.idx()].gc_busy_until(self.now);
        let die = t.die;
        let is_read = t.kind.is_read();
        let d = &self.ctl.dies[die.idx()];
        // A free die with nothing queued: `dispatch` would serve this transaction as the
        // lone head of its queue. Issue it without the round trip.
        let direct = self.ctl.lone_head
            && !self.ctl.deferring
            && !d.busy(self.ctl.cur_key)
            && d.queues.is_empty()
            && (is_read || !d.write_stalled);
        let host_page = direct && self.inlinable(t);
        if host_page {
            // A host page (the common case): without a transaction record unless it waits.
            if is_read {
                if self.try_inline_read(die, t)? {
                    return Ok(());
                }
            } else if let Some(issued) = self.try_inline_write(t)? {
                // Refused: dispatch goes on as it would after a head that issued nothing.
                return if issued { Ok(()) } else { self.dispatch(die, false) };
            }
        }
        let id = self.ctl.txns.insert(*t);
        if t.lpn >= self.remap_base && t.req != NIL {
            // A host read redirected to a remap page: later reads of it may join it
            // until it is issued (`read_command`).
            self.remap.as_mut().expect("remap on").page_mut(t.link >> 8).queued_read = id;
        }
        if direct && !host_page {
            if is_read {
                if self.try_direct_read(die, id, t, false)? {
                    return Ok(());
                }
            } else if let Some(issued) = self.try_direct_write(die, id, t, false)? {
                return if issued { Ok(()) } else { self.dispatch(die, false) };
            }
        }
        if !is_read {
            count_queued(&mut self.host.queued_writes, self.ctl.txns.get_mut(id));
        }
        let q = &mut self.ctl.dies[die.idx()].queues;
        if is_read {
            q.reads.push_back(t.queued(id));
            self.ctl.read_queue.added(self.now, 1);
        } else {
            q.writes.push_back(t.queued(id))
        }
        self.pend_add(id);
        self.touch_lazy(die);
        if self.ctl.deferring {
            self.defer_die(die);
            return Ok(());
        }
        self.dispatch(die, is_read)
    }

    /// Transaction `id` entered its die's read or write queue or parked writes: add it to
    /// the die's pending sums, if kept ([`PendingTrack`]). A read's page is the one it
    /// has now.
    #[inline]
    pub(super) fn pend_add(&mut self, id: u32) {
        if self.ctl.pending.is_some() {
            self.pend_add_kept(id);
        }
    }

    #[inline(never)]
    fn pend_add_kept(&mut self, id: u32) {
        let tx = *self.ctl.txns.get(id);
        let op = pending_op(&tx, &*self.ftl, &self.geo, self.page_size);
        let e = PendingEntry::of(&self.geo, self.device.spec().timing(), &op);
        let p = self.ctl.pending.as_mut().expect("kept");
        let i = id as usize;
        if p.entries.len() <= i {
            p.entries.resize(i + 1, (0, PendingEntry::default()));
        }
        debug_assert_eq!(p.entries[i].0, 0, "transaction {id} added to the pending sums twice");
        p.entries[i] = (tx.die.0 + 1, e);
        p.dies[tx.die.idx()].add(&e);
        if let Some(c) = p.current.as_mut()
            && tx.kind.is_read()
        {
            c.reads.insert(id, tx.lpn);
        }
    }

    /// Under `read_page = "current"`: bring the entries of the queued reads whose page
    /// the FTL moved since the last call (its move log) up to the mapping now, so that
    /// the kept sums are what a scan looking every queued read up again would give.
    /// Every page if the log overflowed. Called before each placement decision.
    #[inline]
    fn pend_sync(&mut self) {
        if self.ctl.pending.as_ref().is_some_and(|p| p.current.is_some()) {
            self.pend_sync_current();
        }
    }

    #[inline(never)]
    fn pend_sync_current(&mut self) {
        let p = self.ctl.pending.as_mut().expect("kept");
        let c = p.current.as_mut().expect("current");
        c.moved.clear();
        c.ids.clear();
        let complete = self.ftl.take_moves(&mut c.moved);
        if c.reads.len() == 0 {
            // Nothing queued to refresh: the log is only emptied.
            return;
        }
        if complete {
            for &l in &c.moved {
                c.reads.of(l.0, &mut c.ids);
            }
        } else {
            c.reads.all(&mut c.ids);
        }
        let timing = self.device.spec().timing();
        for &id in &c.ids {
            let tx = self.ctl.txns.get(id);
            let e =
                PendingEntry::of(&self.geo, timing, &pending_op(tx, &*self.ftl, &self.geo, self.page_size));
            let (die, old) = &mut p.entries[id as usize];
            debug_assert!(*die != 0, "listed read {id} is not pending");
            if *old != e {
                p.dies[(*die - 1) as usize].remove(old);
                p.dies[(*die - 1) as usize].add(&e);
                *old = e;
            }
        }
        if cfg!(debug_assertions) {
            self.check_pending_current();
        }
    }

    /// Debug builds, after [`Self::pend_sync`]: every die's kept sums equal a scan of its
    /// queues that looks every read up now, reads' array times included.
    fn check_pending_current(&self) {
        let p = self.ctl.pending.as_ref().expect("kept");
        let timing = self.device.spec().timing();
        for (d, ctl) in self.ctl.dies.iter().enumerate() {
            let mut scan = PendingSums::default();
            for t in ctl.pending_ids() {
                let op = pending_op(self.ctl.txns.get(t), &*self.ftl, &self.geo, self.page_size);
                scan.add(&PendingEntry::of(&self.geo, timing, &op));
            }
            assert!(
                scan == p.dies[d],
                "pending sums of die {d} not current: kept {:?}, scanned {scan:?}",
                p.dies[d]
            );
        }
    }

    /// Transaction `id` left its die's queue or parked writes (issued, dropped, moved):
    /// take its entry off the die's pending sums, if kept.
    #[inline]
    pub(super) fn pend_remove(&mut self, id: u32) {
        if let Some(p) = self.ctl.pending.as_mut() {
            pend_remove_kept(p, id);
        }
    }

    /// [`Self::pend_remove`] of each of `ids`.
    fn pend_remove_all(&mut self, ids: &[u32]) {
        if let Some(p) = self.ctl.pending.as_mut() {
            for &t in ids {
                pend_remove_kept(p, t);
            }
        }
    }

    /// Queued read `id` changed its byte range (a remap read widened by a joiner): its
    /// entry again.
    pub(super) fn pend_refresh(&mut self, id: u32) {
        let queued =
            self.ctl.pending.as_ref().is_some_and(|p| p.entries.get(id as usize).is_some_and(|e| e.0 != 0));
        if queued {
            self.pend_remove(id);
            self.pend_add(id);
        }
    }

    /// Host write `t` waits for its program: count it in the host's queued writes (once;
    /// see [`Txn::counts_queued`]).
    #[inline]
    fn count_queued_write(&mut self, t: &mut Txn) {
        count_queued(&mut self.host.queued_writes, t);
    }

    /// Work on `die`: queued transactions and GC jobs, parked work, operations in flight
    /// (how RAIN 1 picks the copy to read).
    pub(super) fn die_load(&self, die: DieId) -> usize {
        let d = &self.ctl.dies[die.idx()];
        d.queues.len() + d.parked.len() + d.unfinished as usize + usize::from(d.lazy.key > self.ctl.cur_key)
    }

    /// True if `die` has no operation in flight or parked work and the device has it
    /// idle now (what placement policies and admission see as an idle die).
    pub(super) fn die_idle_now(&self, die: DieId) -> bool {
        let d = &self.ctl.dies[die.idx()];
        !d.busy(self.ctl.cur_key) && d.parked.is_empty() && self.device.is_die_idle(die, self.now)
    }

    /// A GC job was just queued on `die`: if no completion of the die will offer it
    /// (the die is idle), have it offered — with the batch being queued, or once the
    /// present step ends ([`Self::wake_idle_gc_dies`]). Queued from the die's own
    /// completions, the job is offered by the `dispatch` that follows them; queued from
    /// elsewhere (a write refused on another die, a cached mapping's write-back), it was
    /// left waiting until the end of the run (swarm_cached seeds 23480 and 28303).
    pub(super) fn wake_for_gc(&mut self, die: DieId) {
        if self.ctl.dies[die.idx()].busy(self.ctl.cur_key) {
            return;
        }
        if self.ctl.deferring {
            self.defer_die(die);
        } else if !self.ctl.idle_gc.contains(&die) {
            self.ctl.idle_gc.push(die);
        }
    }

    /// While a batch is being queued: offer `die` its work at [`Self::end_batch`] (once,
    /// in first-touch order).
    #[inline]
    fn defer_die(&mut self, die: DieId) {
        if !self.ctl.deferred_mark[die.idx()] {
            self.ctl.deferred_mark[die.idx()] = true;
            self.ctl.deferred.push(die);
        }
    }

    /// Offer the dies of [`Self::wake_for_gc`] their queued work, in the order their GC
    /// jobs were queued (a die busy by now is offered it by its completion).
    #[cold]
    pub(super) fn wake_idle_gc_dies(&mut self) -> Result<(), RunError> {
        while !self.ctl.idle_gc.is_empty() {
            let die = self.ctl.idle_gc.remove(0);
            self.dispatch(die, false)?;
        }
        Ok(())
    }

    /// Start queueing a batch of transactions (a request's pages, a batch of flushes):
    /// with a batching scheduler, dies are offered work only at [`Self::end_batch`].
    /// Returns whether this call opened the batch (nested batches join the outer one).
    pub(super) fn begin_batch(&mut self) -> bool {
        if self.ctl.deferring || !self.ctl.batches {
            return false;
        }
        self.ctl.deferring = true;
        true
    }

    /// Offer the dies that received transactions their work, in first-touch order.
    pub(super) fn end_batch(&mut self, opened: bool) -> Result<(), RunError> {
        if !opened {
            return Ok(());
        }
        self.ctl.deferring = false;
        let mut dies = std::mem::take(&mut self.ctl.deferred);
        for &d in &dies {
            self.ctl.deferred_mark[d.idx()] = false;
        }
        for &d in &dies {
            if !self.serve_lone_txn(d)? {
                self.dispatch(d, true)?;
            }
        }
        dies.clear();
        if self.ctl.deferred.is_empty() {
            self.ctl.deferred = dies;
        }
        Ok(())
    }

    /// [`Self::dispatch`] of a die offered its batch in the commonest state at light
    /// load: free, with one queued read or (not stalled) write and nothing else, and a
    /// scheduler that [`TxnScheduler::serves_lone_single`]. `serve_queues` would decide
    /// that transaction alone and issue it the same way; this skips its frame (measured
    /// with callgrind on the replay benchmark: see docs/performance.md). False if the
    /// state is another or nothing issued: the caller then dispatches, which starts
    /// over from the die's state as `serve_queues`' loop would.
    #[inline]
    fn serve_lone_txn(&mut self, die: DieId) -> Result<bool, RunError> {
        let d = &self.ctl.dies[die.idx()];
        if !self.ctl.lone_single || d.busy(self.ctl.cur_key) || d.queues.len() != 1 {
            return Ok(false);
        }
        if !d.queues.reads.is_empty() {
            self.issue_head_read(die)
        } else if !d.queues.writes.is_empty() && !d.write_stalled {
            self.issue_head_write(die)
        } else {
            Ok(false)
        }
    }

    /// Put transaction `t` back at the head of its die's queue (it keeps its seq).
    fn requeue_front(&mut self, t: u32) {
        let tx = *self.ctl.txns.get(t);
        let q = &mut self.ctl.dies[tx.die.idx()].queues;
        if tx.kind.is_read() {
            q.reads.push_front(tx.queued(t));
            self.ctl.read_queue.added(self.now, 1);
        } else {
            q.writes.push_front(tx.queued(t))
        }
        self.pend_add(t);
        self.touch_lazy(tx.die);
    }

    /// True if a read may suspend the die's running program/erase: the device's rules
    /// allow it, more than `sched.suspend_threshold` of it remains, and the device
    /// would preempt it now ([`lamina_nand_model::Device::read_would_preempt`]).
    fn may_suspend(&self, die: DieId) -> bool {
        let d = &self.ctl.dies[die.idx()];
        if d.pe_op == NIL {
            return false;
        }
        let allowed = match self.device.spec().suspension() {
            Some(r) => match d.pe_kind {
                PeKind::Program => r.program,
                PeKind::Erase => r.erase,
            },
            None => false,
        };
        // A zero threshold leaves the decision to the device's rules entirely (pre-#9
        // behaviour: a read also "suspends" an op completing this instant, which the
        // device then simply follows).
        let threshold = self.cfg.sched.suspend_threshold;
        allowed
            && (threshold.0 == 0 || self.ctl.ops.get(d.pe_op).done.saturating_since(self.now) > threshold)
            // The device would suspend the operation (or join its open suspension)
            // rather than queue the read behind it: a read the device would make wait
            // (cap reached, the suspension's window closed) waits in the die's read
            // queue instead, where it neither books the channel ahead nor bypasses
            // the scheduler.
            && self.device.read_would_preempt(die, self.now)
    }

    /// Serve the die's queues while it is free (or, for a new read, while a program or
    /// erase it could suspend is running).
    #[inline]
    pub(super) fn dispatch(&mut self, die: DieId, read_arrived: bool) -> Result<(), RunError> {
        // Nothing queued, nothing to serve: the common case when an operation completes
        // (checked here so that it costs no call).
        let d = &self.ctl.dies[die.idx()];
        if d.queues.is_empty() {
            return Ok(());
        }
        // A busy die serves nothing now unless a read arrived that may suspend its
        // program or erase (`serve_queues`' first test, without the call: under a
        // backlog, most transactions are queued on a busy die).
        if d.busy(self.ctl.cur_key) && (!read_arrived || d.pe_op == NIL) {
            return Ok(());
        }
        self.serve_queues(die, read_arrived)
    }

    /// [`Self::dispatch`] of a die with queued work.
    fn serve_queues(&mut self, die: DieId, read_arrived: bool) -> Result<(), RunError> {
        loop {
            let d = &self.ctl.dies[die.idx()];
            let free = !d.busy(self.ctl.cur_key);
            let suspend = !free && read_arrived && self.may_suspend(die);
            if !free && !suspend {
                return Ok(());
            }
            if d.queues.is_empty() {
                return Ok(());
            }
            let slot = Slot { die, suspend, writes_blocked: d.write_stalled };
            if self.ctl.lone_single
                && let Some(class) = lamina_sched::lone_eligible_class(&slot, &d.queues)
                && (self.ctl.lone_head || d.queues.len_of(class) == 1)
            {
                // The scheduler would serve the head of the one eligible queue with work
                // (alone: nothing else is queued there that it could join).
                let issued = match class {
                    Class::Read => self.issue_head_read(die),
                    Class::Write => self.issue_head_write(die),
                    Class::Gc => self.issue_gc(die, &[0]),
                };
                if issued? {
                    return Ok(());
                }
                continue;
            }
            if let Some(head) = match self.ctl.head_rule {
                // The scheduler's fixed rule, without a call (`fcfs`).
                Some(rule) => Some(rule.pick(&slot, &d.queues)),
                None => self.ctl.scheduler.pick_head(&slot, &d.queues),
            } {
                // A scheduler of heads alone (`fcfs`): its decision without a view.
                let issued = match head {
                    None => return Ok(()),
                    Some(Class::Read) => self.issue_head_read(die),
                    Some(Class::Write) => self.issue_head_write(die),
                    Some(Class::Gc) => self.issue_gc(die, &[0]),
                };
                if issued? {
                    return Ok(());
                }
                continue;
            }
            let mut dec = std::mem::take(&mut self.ctl.decision);
            dec.clear();
            {
                let view = View {
                    geo: &self.geo,
                    device: &self.device,
                    ftl: self.ftl.as_ref(),
                    dies: &self.ctl.dies,
                    txns: &self.ctl.txns,
                    page_size: self.page_size,
                    now: self.now,
                    cur: self.ctl.cur_key,
                    pending: self.ctl.pending.as_ref().map(|p| &p.dies[..]),
                };
                self.ctl.scheduler.schedule(&slot, &self.ctl.dies[die.idx()].queues, &view, &mut dec);
            }
            debug_assert!(!suspend || matches!(dec.choice, Choice::Read | Choice::SomlRead | Choice::Idle));
            let issued = match dec.choice {
                Choice::Idle => {
                    self.ctl.decision = dec;
                    return Ok(());
                }
                Choice::Read if dec.picks == [0] => self.issue_head_read(die),
                Choice::Read => self.issue_reads(die, &dec.picks, false),
                Choice::SomlRead => self.issue_reads(die, &dec.picks, true),
                Choice::Write if dec.picks == [0] => self.issue_head_write(die),
                Choice::Write => self.issue_writes(die, &dec.picks),
                Choice::Gc => self.issue_gc(die, &dec.picks),
            };
            self.ctl.decision = dec;
            // A suspending read is one op; a free die is busy once something issued.
            if issued? {
                return Ok(());
            }
        }
    }

    /// Count a command of `kind` over `planes` planes serving `txns` transactions,
    /// issued on `die` now. A command joins a multi-die interleaved batch when another
    /// die of its chip received a command at the same instant (it is counted with 2
    /// dies; the batch's first command with 1).
    pub(super) fn note_command(&mut self, die: DieId, kind: OpKind, planes: u32, txns: u32) {
        let chip = self.geo.chip_of_die(die);
        let last = &mut self.ctl.chip_last_issue[chip.idx()];
        let joined = last.0 == self.now && last.1 != die.0;
        *last = (self.now, die.0);
        self.ctl.op_mix.record(kind, planes, if joined { 2 } else { 1 }, txns);
    }

    /// A GC operation occupies `die` over `span` (for GC-blocked attribution).
    pub(super) fn note_gc_busy(&mut self, die: DieId, start: SimTime, end: SimTime) {
        let d = &mut self.ctl.dies[die.idx()];
        let (s, e) = d.gc_last;
        d.gc_before += e.saturating_since(s).0;
        d.gc_last = (start.max(e), end.max(e));
    }

    pub(super) fn new_op(
        &mut self,
        die: DieId,
        done: SimTime,
        txns: &[u32],
        pe: Option<PeKind>,
        ph: Phases,
    ) -> u32 {
        let more = if txns.len() > 1 {
            let mut arr = [NIL; MAX_OP_TXNS];
            arr[..txns.len()].copy_from_slice(txns);
            self.ctl.op_txns.insert(arr)
        } else {
            NIL
        };
        self.insert_op(
            die,
            done,
            txns.first().copied().unwrap_or(NIL),
            more,
            txns.len() as u8,
            (Inline::No, SimTime::ZERO, 0),
            pe,
            ph,
        )
    }

    /// [`Self::new_op`] of an op serving host page `t` without a transaction record
    /// ([`Inline`]).
    #[inline(always)]
    fn new_inline_op(
        &mut self,
        die: DieId,
        done: SimTime,
        t: &Txn,
        inline: Inline,
        pe: Option<PeKind>,
        ph: Phases,
    ) {
        // Only an op alone on its die (not a read suspending an erase, say: the die's
        // record holds one lazy op, and its completion must be the die's). With work
        // queued behind it, its completion serves that work: its event is scheduled now
        // (as `touch_lazy` would on the next push), without an op record.
        let d = &self.ctl.dies[die.idx()];
        if self.ctl.lazy && !d.busy(self.ctl.cur_key) {
            let queued = !d.queues.is_empty();
            self.lazy_op(die, done, t, ph);
            if queued {
                self.schedule_lazy(die);
            }
            return;
        }
        self.insert_op(die, done, t.req, NIL, 1, (inline, t.enq, t.gc_mark), pe, ph);
    }

    /// Whether host pages served alone on idle dies may complete lazily ([`LazyOp`]):
    /// when nothing but the die's queue and the page's request needs the completion at
    /// its instant — no program suspension (a read suspends a program through its
    /// record; host pages are reads and programs, so erase suspension is fine), no GC
    /// timeline (it records each host read's completion), host interface, remapping,
    /// reallocation or replication, and a placement that never defers writes (undecided
    /// writes are retried at every completion).
    pub(super) fn lazy_eligible(&self) -> bool {
        self.lazy_allowed
            && self.device.spec().suspension().is_none_or(|r| !r.program)
            && self.gc_timeline.is_none()
            && self.hif.is_none()
            && self.remap.is_none()
            && self.realloc.is_none()
            && !self.replicated
            && !self.cfg.sched.placement.may_defer()
    }

    /// [`Self::new_inline_op`] completed lazily ([`LazyOp`]): the op's completion key is
    /// reserved in the order of events and counted as processed; the request counts the
    /// page as done now and remembers its latest lazy page (it completes with it, by an
    /// event at its key, unless another part completes later).
    #[inline(never)]
    fn lazy_op(&mut self, die: DieId, done: SimTime, t: &Txn, ph: Phases) {
        let key = self.events.reserve(done);
        let times = self.page_times(t.enq, t.gc_mark, ph);
        self.ctl.dies[die.idx()].lazy = LazyOp { key, req: t.req, pushed: false, times };
        self.events_processed += 1;
        self.last_op_done = self.last_op_done.max(done);
        let r = self.host.reqs.get_mut(t.req);
        if key > r.lazy_key {
            r.lazy_key = key;
            r.lazy_die = die.0;
        }
        r.remaining -= 1;
        if r.remaining == 0 {
            self.defer_request(t.req);
        }
    }

    /// Request `req` has no part left but its latest lazy page, which completes later:
    /// schedule that page's completion event (once), which completes the request.
    pub(super) fn defer_request(&mut self, req: u32) {
        let r = self.host.reqs.get_mut(req);
        r.deferred = true;
        let die = DieId(r.lazy_die);
        debug_assert!(
            self.ctl.dies[die.idx()].lazy.key == r.lazy_key && self.ctl.dies[die.idx()].lazy.req == req,
            "a deferred request's page left its die"
        );
        self.schedule_lazy(die);
    }

    /// Work was queued on `die`: if its lazy op has not completed yet, its completion
    /// must run as an event (it serves the queue, as `op_done` would).
    #[inline]
    pub(super) fn touch_lazy(&mut self, die: DieId) {
        if self.ctl.dies[die.idx()].lazy.key > self.ctl.cur_key {
            self.schedule_lazy(die);
        }
    }

    /// Schedule the completion event of `die`'s lazy op at its reserved key (once).
    #[inline]
    fn schedule_lazy(&mut self, die: DieId) {
        let d = &mut self.ctl.dies[die.idx()];
        if !d.lazy.pushed {
            d.lazy.pushed = true;
            self.events.push_reserved(d.lazy.key, Event::Lazy { die: die.0 });
        }
    }

    /// The completion event of `die`'s lazy op ([`Self::touch_lazy`],
    /// [`Self::defer_request`]): what `op_done` does for an inline op, in its order.
    pub(super) fn lazy_done(&mut self, die: DieId) -> Result<(), RunError> {
        // Counted as processed when it was issued.
        self.events_processed -= 1;
        let d = &mut self.ctl.dies[die.idx()];
        let lz = d.lazy;
        debug_assert_eq!(lz.key, self.ctl.cur_key, "lazy completion out of order");
        d.write_stalled = false;
        self.last_op_done = self.last_op_done.max(self.now);
        let r = self.host.reqs.get(lz.req);
        if r.deferred && r.lazy_key == lz.key {
            let a = self.inline_attribution(die, &lz.times, r.arrival);
            self.complete_request(lz.req, &a)?;
        }
        self.dispatch(die, false)?;
        if !self.ctl.undecided.is_empty() {
            self.retry_undecided()?;
        }
        Ok(())
    }

    /// Whether host page `t`, issued alone, is served by an op without a transaction
    /// record ([`Inline`]).
    #[inline]
    fn inlinable(&self, t: &Txn) -> bool {
        t.req != NIL
            && t.lpn < self.remap_base
            && matches!(t.kind, TxnKind::Read | TxnKind::Write)
            && t.translation == 0
            && !self.ctl.ftl_translates
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn insert_op(
        &mut self,
        die: DieId,
        done: SimTime,
        txn: u32,
        more: u32,
        ntxns: u8,
        (inline, enq, gc_mark): (Inline, SimTime, u64),
        pe: Option<PeKind>,
        ph: Phases,
    ) -> u32 {
        let op =
            self.ctl.ops.insert(self.op_record(die, done, (txn, more, ntxns), (inline, enq, gc_mark), ph));
        let d = &mut self.ctl.dies[die.idx()];
        d.unfinished += 1;
        if let Some(k) = pe {
            d.pe_op = op;
            d.pe_kind = k;
        }
        // The completions of a request's pages issued together on idle channels end at
        // the same instant: one heap entry for all of them (`EventQueue::push_run`).
        self.events.push_run(done, Event::OpDone { op });
        op
    }

    /// The record of an op on `die` issued now, done at `done`, serving `txns` (the
    /// first, the `op_txns` entry of the others, how many).
    #[inline(always)]
    fn op_record(
        &self,
        die: DieId,
        done: SimTime,
        (txn, more, ntxns): (u32, u32, u8),
        (inline, enq, gc_mark): (Inline, SimTime, u64),
        ph: Phases,
    ) -> Op {
        Op {
            die,
            done,
            txn,
            more,
            ntxns,
            translation: false,
            inline,
            times: self.page_times(enq, gc_mark, ph),
        }
    }

    /// The [`PageTimes`] of an op issued now with phases `ph`, of a transaction queued
    /// at `enq` with the die's GC mark `gc_mark`.
    #[inline(always)]
    fn page_times(&self, enq: SimTime, gc_mark: u64, ph: Phases) -> PageTimes {
        PageTimes {
            issued: self.now,
            enq,
            gc_mark,
            start_after: ns32(ph.start.saturating_since(self.now)),
            transfer: ns32(ph.transfer),
            array: ns32(ph.array),
            suspended: 0,
        }
    }

    pub(super) fn note_suspension(&mut self, timing: &lamina_nand_model::OpTiming) {
        if let Some(s) = timing.suspended {
            let pe = self.ctl.dies[s.die.idx()].pe_op;
            assert!(pe != NIL, "device suspended an op the engine does not know");
            let op = self.ctl.ops.get_mut(pe);
            assert_eq!(op.done, s.old_done, "suspended op completion mismatch");
            op.times.suspended =
                op.times.suspended.saturating_add(ns32(s.new_done.saturating_since(s.old_done)));
            op.done = s.new_done;
            self.events.push(s.new_done, Event::OpDone { op: pe });
        }
    }

    // ------------------------------------------------------------------ reads

    /// [`Self::issue_reads`] of the head of `die`'s read queue alone: the common case in
    /// a small function for the hot path, every other case on the general path (which
    /// decides the same way).
    fn issue_head_read(&mut self, die: DieId) -> Result<bool, RunError> {
        let head = self.ctl.dies[die.idx()].queues.reads.front().expect("a read is queued").id;
        self.warm_queue_ahead(die, false);
        let tx = *self.ctl.txns.get(head);
        if self.try_direct_read(die, head, &tx, true)? {
            return Ok(true);
        }
        self.issue_reads(die, &[0], false)
    }

    /// Issue read `id` (`tx`) alone on `die` if it is the common case — mapped, still on
    /// `die`, translated, no verifier — taking it off the head of the read queue if
    /// `dequeue`. False (and nothing changed) otherwise.
    #[inline]
    fn try_direct_read(&mut self, die: DieId, id: u32, tx: &Txn, dequeue: bool) -> Result<bool, RunError> {
        let Some(ppa) = self.direct_read_page(die, tx) else { return Ok(false) };
        if dequeue {
            self.ctl.dies[die.idx()].queues.reads.pop_front();
            self.ctl.read_queue.removed(self.now, 1);
            self.pend_remove(id);
        }
        let (off, len) = if tx.kind == TxnKind::RmwRead { (0, self.page_size) } else { (tx.offset, tx.len) };
        // The one-page read without building a command (the device's `read_page`).
        let issued = self.device.read_page(self.now, ppa, off, len);
        let timing = self.timing_of(&issued)?;
        if dequeue && self.inlinable(tx) {
            // Off its queue: the op keeps what the record held for it.
            self.ctl.txns.free(id);
            self.inline_read_issued(die, tx, timing);
        } else {
            self.read_issued(die, &[id], timing, OpKind::Read);
        }
        Ok(true)
    }

    /// Where read `tx` issued alone on `die` reads, if that is the common case: mapped,
    /// still on `die`, translated, no verifier (else `None`).
    #[inline]
    fn direct_read_page(&mut self, die: DieId, tx: &Txn) -> Option<Ppa> {
        let hint = self.ctl.read_hint.take();
        if (!tx.translated && self.ctl.ftl_translates) || self.verifier.enabled() {
            return None;
        }
        let ppa = match hint {
            // Nothing was remapped since admission looked the page up.
            Some((lpn, ppa, epoch)) if lpn == tx.lpn && self.ftl.lookup_epoch() == Some(epoch) => ppa,
            _ => self.ftl.lookup(Lpn(tx.lpn))?,
        };
        (self.die_of_ppa(ppa) == die).then_some(ppa)
    }

    /// [`Self::try_direct_read`] of host read `t` as it is queued, without a
    /// transaction record ([`Inline`]; what `read_issued` does for it).
    #[inline]
    fn try_inline_read(&mut self, die: DieId, t: &Txn) -> Result<bool, RunError> {
        let Some(ppa) = self.direct_read_page(die, t) else { return Ok(false) };
        let issued = self.device.read_page(self.now, ppa, t.offset, t.len);
        let timing = self.timing_of(&issued)?;
        self.inline_read_issued(die, t, timing);
        Ok(true)
    }

    /// [`Self::read_issued`] of host read `t` alone, served without a transaction
    /// record ([`Inline`]).
    #[inline]
    fn inline_read_issued(&mut self, die: DieId, t: &Txn, timing: &lamina_nand_model::OpTiming) {
        if timing.suspended.is_some() {
            self.note_suspension(timing);
        }
        self.ctl.counters.host_reads += 1;
        self.mark_start(t.req);
        self.note_command(die, OpKind::Read, 1, 1);
        self.new_inline_op(die, timing.done, t, Inline::Read, None, Phases::of(timing));
    }

    /// [`Self::try_direct_write`] of host write `t` as it is queued, without a
    /// transaction record unless the FTL refuses it ([`Inline`]; what `program_group`
    /// does for one page).
    #[inline]
    fn try_inline_write(&mut self, t: &Txn) -> Result<Option<bool>, RunError> {
        if self.needs_rmw(t) || self.write_needs_translation(t) {
            return Ok(None);
        }
        match self.ftl.write(Lpn(t.lpn), t.plane) {
            Ok(ppa) => {
                self.inline_program(t, ppa)?;
                Ok(Some(true))
            }
            Err(e) => {
                // It waits now (in its queue or another's), with a record.
                let id = self.ctl.txns.insert(*t);
                count_queued(&mut self.host.queued_writes, self.ctl.txns.get_mut(id));
                self.write_refused(id, e).map(Some)
            }
        }
    }

    /// [`Self::program_group`] of host write `t` alone at `ppa`, served without a
    /// transaction record ([`Inline`]; `program_tag`, then `program_issued`).
    #[inline]
    fn inline_program(&mut self, t: &Txn, ppa: Ppa) -> Result<(), RunError> {
        if t.counted {
            self.write_mapped(t.lpn);
        }
        if self.remap_base != u64::MAX {
            self.remap_invalidate(t.lpn);
        }
        let tag = self.verifier.program(t.lpn);
        let issued = self.device.program_page(self.now, ppa, tag);
        let timing = self.timing_of(&issued)?;
        let die = self.die_of_ppa(ppa);
        self.ctl.dies[die.idx()].writes_done += 1;
        self.mark_start(t.req);
        self.note_command(die, OpKind::Program, 1, 1);
        self.new_inline_op(die, timing.done, t, Inline::Write, Some(PeKind::Program), Phases::of(timing));
        self.maybe_start_gc(self.geo.plane_of_ppa(ppa));
        Ok(())
    }

    /// The timing of a one-page device call, by reference into its result. Moving the
    /// [`lamina_nand_model::OpTiming`] out (`map_err(..)?`) made the compiler copy it
    /// through the stack in 16-byte loads of what the device had just stored in 8-byte
    /// pieces, loads the store buffer cannot forward: 2.9 % of the simulation thread's
    /// `perf` samples sat on that copy in the inline read alone (docs/performance.md,
    /// tenth session).
    #[inline(always)]
    fn timing_of<'a>(
        &self,
        issued: &'a Result<lamina_nand_model::OpTiming, lamina_nand_model::NandError>,
    ) -> Result<&'a lamina_nand_model::OpTiming, RunError> {
        issued.as_ref().map_err(|e| self.nand(e.clone()))
    }

    /// The die holding physical page `ppa`.
    #[inline]
    pub(super) fn die_of_ppa(&self, ppa: Ppa) -> DieId {
        self.geo.die_of_ppa(ppa)
    }

    /// Issue the read command `cmd` serving the transactions `ids` (already out of
    /// their queue) on `die`, and account for it.
    fn read_command(&mut self, die: DieId, ids: &[u32], cmd: &Command<'_>) -> Result<(), RunError> {
        let timing = self.device.issue(self.now, cmd).map_err(|e| self.nand(e))?;
        let kind = if matches!(cmd, Command::SomlRead { .. }) { OpKind::SomlRead } else { OpKind::Read };
        self.read_issued(die, ids, &timing, kind);
        Ok(())
    }

    /// The read command of `kind` serving the transactions `ids` on `die` was issued
    /// with `timing`: account for it and start its operation.
    fn read_issued(&mut self, die: DieId, ids: &[u32], timing: &lamina_nand_model::OpTiming, kind: OpKind) {
        // Checked here: most reads suspend nothing, and then it costs no call.
        if timing.suspended.is_some() {
            self.note_suspension(timing);
        }
        for &t in ids {
            let (kind, req, lpn, link, seq) = {
                let x = self.ctl.txns.get(t);
                (x.kind, x.req, x.lpn, x.link, x.seq)
            };
            if kind == TxnKind::RmwRead {
                self.ctl.counters.rmw_reads += 1;
            } else if req == NIL && self.realloc.is_some() {
                // A reallocation's read (docs/policies.md, "RS reallocation").
                self.realloc_read_issued(link, lpn);
            } else if req == NIL {
                // A remapping copy's read (docs/policies.md, "Remapping").
                self.remap.as_mut().expect("only remapping reads for no request").counters.copy_reads += 1;
            } else {
                self.ctl.counters.host_reads += 1;
                if lpn >= self.remap_base {
                    let p = self.remap.as_mut().expect("remap on").page_mut(link >> 8);
                    p.queued_read = NIL;
                    // The requests that joined it while it was queued finish with it.
                    let joiners = std::mem::take(&mut p.joiners);
                    p.flights.push((seq, joiners));
                }
            }
            self.mark_start(req);
        }
        let n = ids.len() as u32;
        self.note_command(die, kind, if kind == OpKind::SomlRead { 1 } else { n }, n);
        self.new_op(die, timing.done, ids, None, Phases::of(timing));
    }

    /// Issue `t`, a read of remap page `ppa` for host reads that joined the read of it
    /// that just completed, as a register read (`Command::RegisterRead`: data output
    /// from the die's page register, no sensing; docs/policies.md, "Remapping"). The
    /// caller checked that the register holds the bytes. Not a flash read: counted in
    /// `remap.register_reads` only.
    pub(super) fn issue_register_read(
        &mut self,
        mut t: Txn,
        ppa: lamina_nand_model::Ppa,
    ) -> Result<u64, RunError> {
        t.seq = self.ctl.next_seq();
        let seq = t.seq;
        t.enq = self.now;
        t.gc_mark = self.ctl.dies[t.die.idx()].gc_busy_until(self.now);
        t.translated = true;
        if self.verifier.enabled() {
            let arrival = self.arrival_of(t.req);
            self.verifier.check(&self.device, t.lpn, ppa, self.now, arrival)?;
        }
        let page = self.geo.addr(ppa);
        let cmd = Command::RegisterRead { page, offset_bytes: t.offset, len_bytes: t.len };
        let timing = self.device.issue(self.now, &cmd).map_err(|e| self.nand(e))?;
        debug_assert!(timing.suspended.is_none());
        let (die, req) = (t.die, t.req);
        let id = self.ctl.txns.insert(t);
        self.mark_start(req);
        self.new_op(die, timing.done, &[id], None, Phases::of(&timing));
        Ok(seq)
    }

    /// Issue the read command `picks` (positions in the die's read queue) describe: one
    /// read, a multi-plane read, or (`soml`) a SOML read. The anchor (first pick) is
    /// handled as a lone read would be — trimmed while queued, moved to another die —
    /// and the others join only if the device would accept them with it; the rest stay
    /// queued in place. Returns false if nothing was issued.
    #[inline(never)]
    fn issue_reads(&mut self, die: DieId, picks: &[u32], soml: bool) -> Result<bool, RunError> {
        let q = &self.ctl.dies[die.idx()].queues.reads;
        let anchor_id = q[picks[0] as usize].id;
        let tx = *self.ctl.txns.get(anchor_id);
        let Some(ppa) = self.ftl.lookup(Lpn(tx.lpn)) else {
            // Trimmed while queued. A host read returns zeros; a read-modify-write read
            // has no old data to merge, so its write proceeds alone (counting it as an
            // unwritten host read double-counted a read page: swarm seed 247).
            self.ctl.dies[die.idx()].queues.reads.remove(picks[0] as usize);
            self.ctl.read_queue.removed(self.now, 1);
            self.pend_remove(anchor_id);
            self.ctl.txns.remove(anchor_id);
            if tx.kind == TxnKind::Read && tx.req != NIL {
                self.host.unwritten_reads += 1;
            } else if tx.kind == TxnKind::Read && self.realloc.is_some() {
                self.realloc_dropped(tx.link);
            }
            let translation = Nanos(tx.translation);
            let a = Attribution {
                queue_wait: Nanos(
                    self.now.saturating_since(self.arrival_of(tx.req)).0.saturating_sub(translation.0),
                ),
                translation,
                ..Attribution::default()
            };
            self.after_txn(tx, &a)?;
            return Ok(false);
        };
        let a = self.geo.addr(ppa);
        let at_die = self.geo.die_id(a);
        if at_die != die {
            // A write or GC moved the page to another die while the read was queued.
            self.ctl.dies[die.idx()].queues.reads.remove(picks[0] as usize);
            self.ctl.read_queue.removed(self.now, 1);
            self.pend_remove(anchor_id);
            self.ctl.counters.read_redirects += 1;
            let mark = self.ctl.dies[at_die.idx()].gc_busy_until(self.now);
            let m = self.ctl.txns.get_mut(anchor_id);
            m.die = at_die;
            // GC-blocked time counts from here on the die it now waits for.
            m.gc_mark = mark;
            self.requeue_front(anchor_id);
            self.dispatch(at_die, true)?;
            return Ok(false);
        }
        if !tx.translated && self.start_translation(die, picks[0], anchor_id)? {
            // Issued something on this die (its spare-area reads), or nothing here.
            return Ok(self.ctl.dies[die.idx()].busy(self.ctl.cur_key));
        }
        let q = &self.ctl.dies[die.idx()].queues.reads;
        // Gather the members: the anchor, then each pick the device accepts with it.
        let mut members = [0u32; MAX_OP_TXNS]; // positions in `picks`
        let mut addrs = std::mem::take(&mut self.ctl.addrs);
        addrs.clear();
        addrs.push(a);
        let mut n = 1;
        let mut planes = 1u64 << a.plane;
        // SOML parts (built only for a SOML read: a plain read's hot path stays small).
        let mut parts = std::mem::take(&mut self.ctl.parts);
        parts.clear();
        if soml {
            parts.push(SomlPart { page: a, offset_bytes: tx.offset, len_bytes: tx.len });
        }
        for (k, &p) in picks.iter().enumerate().skip(1) {
            if n == MAX_OP_TXNS {
                break;
            }
            let t = *self.ctl.txns.get(q[p as usize].id);
            if !t.translated && self.needs_translation(t.lpn) {
                continue; // it joins once its translation step is done
            }
            let Some(pp) = self.ftl.lookup(Lpn(t.lpn)) else { continue };
            let b = self.geo.addr(pp);
            if self.geo.die_id(b) != die {
                continue;
            }
            let fits = if soml {
                // The device checks the SOML rules; the scheduler picked by them, the
                // engine re-checks only what may have changed (the page's location).
                b.plane == a.plane && parts.iter().all(|x| x.page.block != b.block)
            } else {
                b.block == a.block && b.page == a.page && planes >> b.plane & 1 == 0
            };
            if fits {
                planes |= 1 << b.plane;
                members[n] = k as u32;
                if soml {
                    parts.push(SomlPart { page: b, offset_bytes: t.offset, len_bytes: t.len });
                }
                addrs.push(b);
                n += 1;
            }
        }
        // Remove the members from the queue (positions refer to the queue before).
        let mut pos = [0u32; MAX_OP_TXNS];
        for i in 0..n {
            pos[i] = picks[members[i] as usize];
        }
        let mut ids = std::mem::take(&mut self.ctl.ids);
        take_picks(&mut self.ctl.dies[die.idx()].queues.reads, &pos[..n], &mut ids);
        self.ctl.read_queue.removed(self.now, n as u64);
        self.pend_remove_all(&ids);
        if self.ctl.ftl_translates {
            for &t in &ids {
                self.translate_joiner(t);
            }
        }
        if self.verifier.enabled() {
            for (i, &t) in ids.iter().enumerate() {
                let tx = *self.ctl.txns.get(t);
                if tx.kind == TxnKind::Read {
                    let ppa = self.geo.ppa(addrs[i]);
                    let arrival = self.arrival_of(tx.req);
                    self.verifier.check(&self.device, tx.lpn, ppa, self.now, arrival)?;
                    if tx.req == NIL && self.realloc.is_none() {
                        self.remap_copy_read_issued(tx.lpn, tx.link);
                    }
                }
            }
        }
        let cmd = if soml && n > 1 {
            Command::SomlRead { parts: &parts }
        } else if n == 1 {
            let (off, len) =
                if tx.kind == TxnKind::RmwRead { (0, self.page_size) } else { (tx.offset, tx.len) };
            Command::Read { pages: &addrs[..1], offset_bytes: off, len_bytes: len }
        } else {
            // Multi-plane: one byte range for all planes, covering every member's.
            let (mut lo, mut hi) = (u32::MAX, 0);
            for &t in &ids {
                let x = self.ctl.txns.get(t);
                let (o, l) = if x.kind == TxnKind::RmwRead { (0, self.page_size) } else { (x.offset, x.len) };
                lo = lo.min(o);
                hi = hi.max(o + l);
            }
            Command::Read { pages: &addrs[..n], offset_bytes: lo, len_bytes: hi - lo }
        };
        self.read_command(die, &ids, &cmd)?;
        self.ctl.addrs = addrs;
        self.ctl.ids = ids;
        self.ctl.parts = parts;
        Ok(true)
    }

    /// True if a write of `lpn` would read its translation page first (a cached
    /// mapping's miss whose page is on flash; the same query as a read's). `scratch` is
    /// a reused buffer (no allocation per query).
    fn needs_write_translation_read(&self, lpn: u64, scratch: &mut Vec<Ppa>) -> bool {
        scratch.clear();
        self.ftl.translation_reads(Lpn(lpn), scratch);
        !scratch.is_empty()
    }

    /// True if the FTL must read spare areas before it can translate `lpn`.
    fn needs_translation(&self, lpn: u64) -> bool {
        if !self.ctl.ftl_translates {
            return false;
        }
        // An empty Vec does not allocate: FTLs without translation reads cost nothing.
        let mut pages = Vec::new();
        self.ftl.translation_reads(Lpn(lpn), &mut pages);
        !pages.is_empty()
    }

    /// The FTL's timed translation step for read `t` (at position `pos` of `die`'s read
    /// queue): if it must read spare areas first, issue those reads (each a
    /// `SPARE_READ_BYTES` read of its page, on the page's die), take the read out of the
    /// queue until they complete, and return true.
    fn start_translation(&mut self, die: DieId, pos: u32, t: u32) -> Result<bool, RunError> {
        let mut pages = std::mem::take(&mut self.ctl.ppas);
        pages.clear();
        let lpn = self.ctl.txns.get(t).lpn;
        let queued = self.ftl.translate(Lpn(lpn), &mut pages);
        if let Some(plane) = queued {
            // The translation queued flash work (a mapping write-back) on that plane.
            self.maybe_start_gc(plane);
        }
        if pages.is_empty() {
            self.ctl.txns.get_mut(t).translated = true;
            self.ctl.ppas = pages;
            return Ok(false);
        }
        self.ctl.dies[die.idx()].queues.reads.remove(pos as usize);
        self.ctl.read_queue.removed(self.now, 1);
        self.pend_remove(t);
        self.issue_translation_reads(t, &pages)?;
        self.ctl.ppas = pages;
        Ok(true)
    }

    /// Issue the translation step's reads `pages` of transaction `t` (each a
    /// `SPARE_READ_BYTES` read of its page, on the page's die); `t` is out of its queue
    /// until the last completes ([`Self::translation_read_done`]).
    fn issue_translation_reads(&mut self, t: u32, pages: &[Ppa]) -> Result<(), RunError> {
        let n = pages.len().min(u8::MAX as usize);
        let x = self.ctl.txns.get_mut(t);
        x.translating = n as u8;
        x.translation = self.now.0;
        let len = SPARE_READ_BYTES.min(self.page_size);
        for &ppa in &pages[..n] {
            let a = self.geo.addr(ppa);
            let on = self.geo.die_id(a);
            let timing = self
                .device
                .issue(self.now, &Command::Read { pages: &[a], offset_bytes: 0, len_bytes: len })
                .map_err(|e| self.nand(e))?;
            self.note_suspension(&timing);
            self.ctl.counters.translation_reads += 1;
            self.ctl.counters.translation_read_ns += timing.done.saturating_since(timing.start).0;
            self.note_command(on, OpKind::Read, 1, 0);
            let op = self.new_op(on, timing.done, &[t], None, Phases::of(&timing));
            self.ctl.ops.get_mut(op).translation = true;
        }
        self.mark_start(self.ctl.txns.get(t).req);
        Ok(())
    }

    /// A host write or flush `t` (at position `pos` of `die`'s write queue) under a
    /// cached mapping: if its entry misses and its translation page is on flash, take it
    /// out of the queue and read that page first (MQSim's write misses wait for it too);
    /// returns true if it did. Done once per write.
    #[inline(never)]
    fn start_write_translation(&mut self, die: DieId, pos: u32, t: u32) -> Result<bool, RunError> {
        let mut pages = std::mem::take(&mut self.ctl.ppas);
        pages.clear();
        let lpn = self.ctl.txns.get(t).lpn;
        self.ftl.translate_write(Lpn(lpn), &mut pages);
        self.ctl.txns.get_mut(t).translated = true;
        let read = !pages.is_empty();
        if read {
            self.ctl.dies[die.idx()].queues.writes.remove(pos as usize);
            self.pend_remove(t);
            self.issue_translation_reads(t, &pages)?;
        }
        self.ctl.ppas = pages;
        Ok(read)
    }

    /// True if write `t` has not had its translation step and needs a read for it.
    #[inline]
    fn write_needs_translation(&self, t: &Txn) -> bool {
        self.ctl.write_translates && !t.translated && t.kind != TxnKind::RmwRead
    }

    /// Read `t` joined another's command without a translation step of its own (it
    /// needed no flash read): perform its translation now, once (a cached mapping counts
    /// the access and may queue a write-back).
    fn translate_joiner(&mut self, t: u32) {
        if self.ctl.txns.get(t).translated {
            return;
        }
        let mut pages = std::mem::take(&mut self.ctl.ppas);
        pages.clear();
        let queued = self.ftl.translate(Lpn(self.ctl.txns.get(t).lpn), &mut pages);
        assert!(pages.is_empty(), "a read joined a command before its translation reads");
        self.ctl.ppas = pages;
        self.ctl.txns.get_mut(t).translated = true;
        if let Some(plane) = queued {
            self.maybe_start_gc(plane);
        }
    }

    /// A spare-area read of read `t`'s translation completed; after the last, the read
    /// goes back to the head of its die's queue, translated.
    fn translation_read_done(&mut self, t: u32) -> Result<(), RunError> {
        let x = self.ctl.txns.get_mut(t);
        x.translating -= 1;
        if x.translating > 0 {
            return Ok(());
        }
        x.translated = true;
        x.translation = self.now.0 - x.translation;
        let die = x.die;
        self.requeue_front(t);
        self.dispatch(die, true)
    }

    // ------------------------------------------------------------------ writes

    /// [`Self::issue_writes`] of the head of `die`'s write queue alone: the common case
    /// (no read-modify-write) in a small function for the hot path; the general
    /// path decides every other case the same way.
    fn issue_head_write(&mut self, die: DieId) -> Result<bool, RunError> {
        let head = self.ctl.dies[die.idx()].queues.writes.front().expect("a write is queued").id;
        self.warm_queue_ahead(die, true);
        let tx = *self.ctl.txns.get(head);
        if self.realloc.is_some() && tx.req == NIL && self.realloc_write_dropped(die, 0, &tx)? {
            return Ok(false);
        }
        match self.try_direct_write(die, head, &tx, true)? {
            Some(issued) => Ok(issued),
            None => self.issue_writes(die, &[0]),
        }
    }

    /// Allocate and program write `id` (`tx`) alone if it needs no read-modify-write, taking it off the head of `die`'s write queue if `dequeue`:
    /// `Some(issued)` (`false`: the FTL refused it, see [`Self::write_refused`]);
    /// `None` (nothing changed) otherwise.
    #[inline]
    fn try_direct_write(
        &mut self,
        die: DieId,
        id: u32,
        tx: &Txn,
        dequeue: bool,
    ) -> Result<Option<bool>, RunError> {
        if self.needs_rmw(tx) || self.write_needs_translation(tx) {
            return Ok(None);
        }
        if dequeue {
            self.ctl.dies[die.idx()].queues.writes.pop_front();
            self.pend_remove(id);
        }
        match self.ftl.write(Lpn(tx.lpn), tx.plane) {
            Ok(ppa) if dequeue && self.inlinable(tx) => {
                // Off its queue: the op keeps what the record held for it.
                self.ctl.txns.free(id);
                self.inline_program(tx, ppa)?;
                Ok(Some(true))
            }
            Ok(ppa) => {
                self.program_group(&[id], &[ppa])?;
                Ok(Some(true))
            }
            Err(e) => {
                // It waits now (in its queue or another's).
                count_queued(&mut self.host.queued_writes, self.ctl.txns.get_mut(id));
                self.write_refused(id, e).map(Some)
            }
        }
    }

    /// Issue the writes `picks` (positions in the die's write queue) describe: one
    /// program, or a multi-plane program when the pages the FTL allocates share block
    /// index and page offset on distinct planes. The anchor is handled as a lone write
    /// would be (read-modify-write, a refused write); others join only if they need no
    /// read-modify-write and the FTL accepts them. Pages that do not align are
    /// programmed by their own commands, right after. Returns false if nothing issued.
    #[inline(never)]
    fn issue_writes(&mut self, die: DieId, picks: &[u32]) -> Result<bool, RunError> {
        let q = &self.ctl.dies[die.idx()].queues.writes;
        let anchor = q[picks[0] as usize].id;
        let tx = *self.ctl.txns.get(anchor);
        if self.realloc.is_some() && tx.req == NIL && self.realloc_write_dropped(die, picks[0], &tx)? {
            return Ok(false);
        }
        if self.write_needs_translation(&tx) && self.start_write_translation(die, picks[0], anchor)? {
            return Ok(self.ctl.dies[die.idx()].busy(self.ctl.cur_key));
        }
        let tx = *self.ctl.txns.get(anchor);
        if self.needs_rmw(&tx) {
            self.ctl.dies[die.idx()].queues.writes.remove(picks[0] as usize);
            self.pend_remove(anchor);
            self.start_rmw(anchor)?;
            return Ok(false);
        }
        // Joiners: writes that need no read-modify-write, in pick order.
        let mut pos = [0u32; MAX_OP_TXNS];
        pos[0] = picks[0];
        let mut n = 1;
        let mut scratch = std::mem::take(&mut self.ctl.ppas);
        let q = &self.ctl.dies[die.idx()].queues.writes;
        for &p in picks.iter().skip(1) {
            if n == MAX_OP_TXNS {
                break;
            }
            let t = self.ctl.txns.get(q[p as usize].id);
            // A joiner whose entry would need a translation read waits for its own turn.
            let waits =
                self.write_needs_translation(t) && self.needs_write_translation_read(t.lpn, &mut scratch);
            // A reallocation's rewrite is checked as an anchor only.
            let realloc = t.req == NIL && self.realloc.is_some();
            if !self.needs_rmw(t) && !waits && !realloc {
                pos[n] = p;
                n += 1;
            }
        }
        self.ctl.ppas = scratch;
        let mut ids = std::mem::take(&mut self.ctl.ids);
        take_picks(&mut self.ctl.dies[die.idx()].queues.writes, &pos[..n], &mut ids);
        self.pend_remove_all(&ids);
        // Allocate. A group goes to the FTL as one all-or-nothing write group (an FTL
        // may need the whole group to place it aligned); if it refuses, the anchor is
        // written alone (a refusal then takes the full-plane path) and the joiners go
        // back to their queue.
        let mut ppas = std::mem::take(&mut self.ctl.ppas);
        ppas.clear();
        if ids.len() > 1 {
            let mut group = [(Lpn(0), PlaneId(0)); MAX_OP_TXNS];
            for (g, &t) in group.iter_mut().zip(ids.iter()) {
                let x = self.ctl.txns.get(t);
                *g = (Lpn(x.lpn), x.plane);
            }
            if self.ftl.write_group(&group[..ids.len()], &mut ppas).is_err() {
                ppas.clear();
                for &j in ids[1..].iter().rev() {
                    self.requeue_front(j);
                }
                ids.truncate(1);
            }
        }
        let first = if ppas.is_empty() { 0 } else { ids.len() };
        let mut kept = first;
        for i in first..ids.len() {
            let t = ids[i];
            let x = *self.ctl.txns.get(t);
            match self.ftl.write(Lpn(x.lpn), x.plane) {
                Ok(ppa) => {
                    ids[kept] = t;
                    kept += 1;
                    ppas.push(ppa);
                }
                Err(e) if i == 0 => {
                    for &j in ids[1..].iter().rev() {
                        self.requeue_front(j);
                    }
                    self.ctl.ids = ids;
                    self.ctl.ppas = ppas;
                    return self.write_refused(anchor, e);
                }
                Err(_) => self.requeue_front(t),
            }
        }
        ids.truncate(kept);
        // Group the allocated pages: consecutive runs at one block index and page on
        // distinct planes make one multi-plane program each.
        let mut start = 0;
        while start < ids.len() {
            let a0 = self.geo.addr(ppas[start]);
            let mut planes = 1u64 << a0.plane;
            let mut end = start + 1;
            while end < ids.len() {
                let b = self.geo.addr(ppas[end]);
                if self.geo.die_id(b) != die
                    || b.block != a0.block
                    || b.page != a0.page
                    || planes >> b.plane & 1 == 1
                {
                    break;
                }
                planes |= 1 << b.plane;
                end += 1;
            }
            if end < ids.len() && start == 0 {
                self.ctl.counters.misaligned_groups += 1;
            }
            self.program_group(&ids[start..end], &ppas[start..end])?;
            if end == ids.len() && start > 0 {
                // The group was split into several programs (a misaligned group).
                let busy_until = self.device.die_free_at(die);
                if let Some(tl) = self.gc_timeline.as_deref_mut() {
                    tl.multi_program(self.now, die, busy_until);
                }
            }
            start = end;
        }
        self.ctl.ids = ids;
        self.ctl.ppas = ppas;
        Ok(true)
    }

    /// Program the allocated pages of the host writes `ids` as one (multi-plane) command.
    fn program_group(&mut self, ids: &[u32], ppas: &[Ppa]) -> Result<(), RunError> {
        if let ([t], [ppa]) = (ids, ppas) {
            // One page (the common case): the device's one-page program, no command.
            let tag = self.program_tag(*t);
            let timing = self.device.program_page(self.now, *ppa, tag).map_err(|e| self.nand(e))?;
            self.program_issued(self.die_of_ppa(*ppa), ids, ppas, &timing);
            return Ok(());
        }
        let n = ids.len();
        let mut addrs = [PageAddr::default(); MAX_OP_TXNS];
        let mut tags = [0u64; MAX_OP_TXNS];
        for (i, (&t, &ppa)) in ids.iter().zip(ppas).enumerate() {
            (addrs[i], tags[i]) = (self.geo.addr(ppa), self.program_tag(t));
        }
        let die = self.geo.die_id(addrs[0]);
        let timing = self
            .device
            .issue(self.now, &Command::Program { pages: &addrs[..n], tags: &tags[..n] })
            .map_err(|e| self.nand(e))?;
        self.program_issued(die, ids, ppas, &timing);
        Ok(())
    }

    /// Host write `t` is about to be programmed: its verifier tag.
    #[inline]
    fn program_tag(&mut self, t: u32) -> u64 {
        let x = self.ctl.txns.get(t);
        let (counted, lpn) = (x.counted, x.lpn);
        if counted {
            self.write_mapped(lpn);
        }
        if self.remap_base != u64::MAX {
            self.remap_invalidate(lpn);
        }
        self.verifier.program(lpn)
    }

    /// The program serving host writes `ids` at `ppas` on `die` was issued with
    /// `timing`: account for it and start its operation.
    fn program_issued(
        &mut self,
        die: DieId,
        ids: &[u32],
        ppas: &[Ppa],
        timing: &lamina_nand_model::OpTiming,
    ) {
        let n = ids.len();
        self.ctl.dies[die.idx()].writes_done += n as u64;
        for &t in ids {
            let req = self.ctl.txns.get(t).req;
            self.mark_start(req);
        }
        self.note_command(die, OpKind::Program, n as u32, n as u32);
        self.new_op(die, timing.done, ids, Some(PeKind::Program), Phases::of(timing));
        for &ppa in ppas {
            self.maybe_start_gc(self.geo.plane_of_ppa(ppa));
        }
    }

    /// True if the write must first read the page's old data (partial page, mapped,
    /// read-modify-write on).
    fn needs_rmw(&self, t: &Txn) -> bool {
        t.partial
            && self.cfg.host.read_modify_write
            && t.kind != TxnKind::RmwRead
            && self.ftl.lookup(Lpn(t.lpn)).is_some()
    }

    /// Read the old page of write `t` first (on its own die); the write is parked and
    /// re-queued when the read completes, no longer partial.
    fn start_rmw(&mut self, t: u32) -> Result<(), RunError> {
        let tx = *self.ctl.txns.get(t);
        let old = self.ftl.lookup(Lpn(tx.lpn)).expect("needs_rmw checked the mapping");
        let a = self.geo.addr(old);
        let die = self.geo.die_id(a);
        self.ctl.txns.get_mut(t).partial = false;
        let seq = self.ctl.next_seq();
        let rmw = Txn { kind: TxnKind::RmwRead, link: t, die, seq, ..tx };
        let rid = self.ctl.txns.insert(rmw);
        self.ctl.dies[tx.die.idx()].parked.push(t);
        self.pend_add(t);
        self.ctl.dies[die.idx()].queues.reads.push_back(rmw.queued(rid));
        self.pend_add(rid);
        self.ctl.read_queue.added(self.now, 1);
        self.touch_lazy(die);
        if die != tx.die {
            self.dispatch(die, true)?;
        }
        Ok(())
    }

    /// The FTL refused host write `t` on its plane (error `e`). Park and retry: if GC on
    /// that plane is queued or can start, the write waits at the head of its queue until
    /// an operation of its die completes; if the plane has nothing to reclaim, the write
    /// moves to the next plane that can take it. Returns false (nothing issued).
    fn write_refused(&mut self, t: u32, e: FtlError) -> Result<bool, RunError> {
        let plane = match e {
            FtlError::NoFreePage { plane } | FtlError::MergeNeeded { plane } => plane,
        };
        self.maybe_start_gc(plane);
        let from = self.ctl.txns.get(t).die;
        if self.gc_queued(plane) {
            // The writes ahead of GC used up the plane (an arbiter or GC mode that lets
            // host writes pass a queued GC job): park the write at the head of its queue
            // until GC on this die frees space (issue #8 swarm, seed 226).
            self.ctl.counters.write_retries += 1;
            self.requeue_front(t);
            self.ctl.dies[from.idx()].write_stalled = true;
            return Ok(false);
        }
        let constraint = self.ftl.write_constraint(Lpn(self.ctl.txns.get(t).lpn));
        let constrained = matches!(constraint, WriteConstraint::Plane(_));
        // Under `Die` the FTL picks the plane inside the die: another plane of the same
        // die would be refused again (a livelock the property test found), so a redirect
        // must leave the die.
        let other_die = constraint == WriteConstraint::Die;
        // Nothing to reclaim on this plane: every page holds valid data (a dynamic
        // placement piled logical pages onto it). Write elsewhere: the next plane, in
        // plane order, with free blocks or GC that frees some.
        let n = self.geo.total_planes();
        let next = if constrained {
            None
        } else {
            (1..n)
                .map(|i| PlaneId((plane.0 + i) % n))
                .find(|&q| (!other_die || self.geo.die_of_plane(q) != from) && self.can_take_writes(q))
                // Past the GC threshold with nothing to reclaim, a plane may still
                // have pages above its reserve.
                .or_else(|| {
                    (1..n)
                        .map(|i| PlaneId((plane.0 + i) % n))
                        .filter(|&q| !other_die || self.geo.die_of_plane(q) != from)
                        .find(|&q| self.ftl.can_write(q))
                })
        };
        let Some(q) = next else {
            // No plane has room: the device is truly out of space.
            return Err(RunError::Ftl { at: self.now, source: e });
        };
        self.ctl.counters.full_plane_redirects += 1;
        let die = self.geo.die_of_plane(q);
        let mark = self.ctl.dies[die.idx()].gc_busy_until(self.now);
        let m = self.ctl.txns.get_mut(t);
        m.plane = q;
        m.die = die;
        m.gc_mark = mark;
        self.requeue_front(t);
        if die != from {
            self.dispatch(die, false)?;
        }
        Ok(false)
    }

    // ------------------------------------------------------------------ completion

    pub(super) fn op_done(&mut self, op: u32) -> Result<(), RunError> {
        let o = self.ctl.ops.remove(op);
        let d = &mut self.ctl.dies[o.die.idx()];
        d.unfinished -= 1;
        // An operation finished (GC may have freed space): a stalled write may retry.
        d.write_stalled = false;
        // A lazy op issued earlier may complete later (`lazy_op`).
        self.last_op_done = self.last_op_done.max(self.now);
        if d.pe_op == op {
            d.pe_op = NIL;
        }
        if o.translation {
            self.translation_read_done(o.txn)?;
            self.dispatch(o.die, false)?;
            return Ok(());
        }
        if o.inline != Inline::No {
            self.inline_op_done(&o)?;
        } else {
            self.txns_done(&o)?;
        }
        self.dispatch(o.die, false)?;
        if !self.ctl.undecided.is_empty() {
            self.retry_undecided()?;
        }
        Ok(())
    }

    /// [`Self::op_done`] of an op without transaction records ([`Inline`]): what
    /// `txns_done` does for its one host page.
    #[inline]
    fn inline_op_done(&mut self, o: &Op) -> Result<(), RunError> {
        let t = &o.times;
        let gc_blocked = || self.ctl.dies[o.die.idx()].gc_blocked(t.issued, t.gc_mark, t.enq);
        if o.inline == Inline::Read && self.gc_timeline.is_some() {
            let g = gc_blocked();
            if let Some(tl) = self.gc_timeline.as_deref_mut() {
                tl.read_done(o.die, t.enq, t.issued, g);
            }
        }
        let r = self.host.reqs.get_mut(o.txn);
        if r.remaining > 1 {
            r.remaining -= 1;
            return Ok(());
        }
        let arrival = r.arrival;
        let a = self.inline_attribution(o.die, &o.times, arrival);
        self.finish_sub(o.txn, 1, &a)
    }

    /// The latency attribution of a page served by an inline op on `die` with times
    /// `o`, of a request that arrived at `arrival` (no translation step, no DRAM).
    #[inline]
    fn inline_attribution(&self, die: DieId, o: &PageTimes, arrival: SimTime) -> Attribution {
        Attribution {
            queue_wait: o.issued.saturating_since(arrival),
            translation: Nanos(0),
            device_wait: Nanos(o.start_after as u64),
            transfer: Nanos(o.transfer as u64),
            array: Nanos(o.array as u64),
            gc_blocked: Nanos(self.ctl.dies[die.idx()].gc_blocked(o.issued, o.gc_mark, o.enq)),
            suspension: Nanos(o.suspended as u64),
            dram: Nanos(0),
        }
    }

    /// [`Self::op_done`] of an op's transaction records.
    fn txns_done(&mut self, o: &Op) -> Result<(), RunError> {
        let o = *o;
        let all = if o.more == NIL { [o.txn; MAX_OP_TXNS] } else { self.ctl.op_txns.remove(o.more) };
        for &t in &all[..o.ntxns as usize] {
            if self.gc_timeline.is_some() {
                self.note_timeline_read(&o, t);
            }
            let x = self.ctl.txns.get(t);
            if matches!(x.kind, TxnKind::Read | TxnKind::Write) && x.req != NIL && x.lpn < self.remap_base {
                let r = self.host.reqs.get_mut(x.req);
                if r.remaining > 1 {
                    // Not the request's last part: only the last one's attribution counts
                    // (`finish_sub`), so skip building this one (and copying it out).
                    r.remaining -= 1;
                    self.ctl.txns.free(t);
                    continue;
                }
            }
            let tx = self.ctl.txns.remove(t);
            let d = &self.ctl.dies[tx.die.idx()];
            let arrival = if tx.req == NIL { o.times.issued } else { self.host.reqs.get(tx.req).arrival };
            // The translation step ran inside the time before the command's issue.
            let translation = Nanos(tx.translation);
            let a = Attribution {
                queue_wait: Nanos(o.times.issued.saturating_since(arrival).0.saturating_sub(translation.0)),
                translation,
                device_wait: Nanos(o.times.start_after as u64),
                transfer: Nanos(o.times.transfer as u64),
                array: Nanos(o.times.array as u64),
                gc_blocked: Nanos(d.gc_blocked(o.times.issued, tx.gc_mark, tx.enq)),
                suspension: Nanos(o.times.suspended as u64),
                dram: Nanos(0),
            };
            self.after_txn(tx, &a)?;
        }
        Ok(())
    }

    /// [`crate::gc_timeline::GcTimeline::read_done`] if transaction `t`, served by `o`,
    /// is a host read (with its GC-blocked time as the latency attribution computes it).
    #[cold]
    fn note_timeline_read(&mut self, o: &Op, t: u32) {
        let x = self.ctl.txns.get(t);
        if x.kind != TxnKind::Read || x.req == NIL || x.lpn >= self.remap_base {
            return;
        }
        let gc_blocked = self.ctl.dies[o.die.idx()].gc_blocked(o.times.issued, x.gc_mark, x.enq);
        let (die, enq) = (o.die, x.enq);
        if let Some(tl) = self.gc_timeline.as_deref_mut() {
            tl.read_done(die, enq, o.times.issued, gc_blocked);
        }
    }

    /// Bookkeeping when a transaction's flash work is done.
    fn after_txn(&mut self, tx: Txn, a: &Attribution) -> Result<(), RunError> {
        match tx.kind {
            TxnKind::Read | TxnKind::Write if tx.lpn < self.remap_base && tx.req != NIL => {
                self.finish_sub(tx.req, 1, a)
            }
            // Reallocation's work (docs/policies.md, "RS reallocation").
            TxnKind::Read if tx.req == NIL && self.realloc.is_some() => self.realloc_read_done(tx.link),
            TxnKind::Write if tx.req == NIL && self.realloc.is_some() => {
                self.realloc_programmed(tx.link);
                Ok(())
            }
            // Remapping's work (docs/policies.md, "Remapping").
            TxnKind::Read if tx.req == NIL => self.remap_copy_read_done(tx.link >> 8),
            TxnKind::Read => {
                self.remap_read_done(tx.link, tx.seq, a)?;
                self.finish_sub(tx.req, 1, a)
            }
            TxnKind::Write => {
                self.remap_programmed(tx.link >> 8);
                Ok(())
            }
            TxnKind::RmwRead if tx.link == NIL => self.pre_read_done(tx.lpn),
            TxnKind::RmwRead => {
                let w = tx.link;
                let wd = self.ctl.txns.get(w).die;
                let parked = &mut self.ctl.dies[wd.idx()].parked;
                let pos = parked.iter().position(|&p| p == w).expect("parked read-modify-write");
                parked.remove(pos);
                self.pend_remove(w);
                self.requeue_front(w);
                // The write's die may be idle (the read ran on another die).
                self.dispatch(wd, false)
            }
            TxnKind::Flush => self.flush_completed(tx.link, tx.lpn),
        }
    }
}
