//! The transaction-scheduling unit of the flash controller: which queued flash
//! transactions of a die form its next flash command.
//!
//! The engine keeps one [`DieQueues`] per die (host reads, host writes and buffer
//! flushes, GC jobs) and owns the clock, the events and the request bookkeeping. When a
//! die can take work — it is free, or a program/erase runs that a read could suspend —
//! the engine describes the opportunity as a [`Slot`] and asks the configured
//! [`TxnScheduler`] for a [`Decision`]: which queue, and which of its transactions go
//! into one command. The scheduler sees the queued transactions and the device through
//! the read-only [`DeviceView`]; it never touches the engine's state. The engine then
//! builds the command (the FTL allocates written pages at that moment), checks it
//! against the device's multi-plane and SOML rules, issues it, and puts back what could
//! not join.
//!
//! Commands a decision can ask for:
//! - a single-plane read, program or GC step (one pick);
//! - a multi-plane read or program: picks on distinct planes of the die at the same
//!   block index and page (mbm-ftl §II-A); GC steps of several planes' jobs taken
//!   together, grouped by the engine into multi-plane copy-backs, reads, programs and
//!   erases where their addresses allow;
//! - a SOML read: partial reads of one plane from different blocks, distinct block
//!   decoders and disjoint bit-line slots (soml-read §4–5);
//! - a read that suspends the running program/erase ([`Slot::suspend`]).
//!
//! Dies of one chip execute independently in the device model and share only the
//! channel, which the device reserves transfer by transfer, so a multi-die interleaved
//! batch is the commands the engine issues on several dies of one chip at the same
//! instant; the report counts them.
//!
//! Schedulers ([`SchedulerKind`], config `sched.scheduler`): `fcfs`, `multiplane`,
//! `sprinkler`, `soml`. Sources and rules: `docs/policies.md`.

use std::collections::VecDeque;

use lamina_nand_model::{DieId, Lpn, PlaneId, Ppa, SomlRules};
use serde::{Deserialize, Serialize};

use crate::{Arbiter, ArbiterKind, Class, DeviceView, GcMode, QueueHeads};

/// The `req` of a transaction that belongs to no host request (buffer flushes).
pub const NO_REQUEST: u32 = u32::MAX;

/// What a queued flash transaction does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnKind {
    /// Host read of one page (or part of it).
    Read,
    /// The read half of a read-modify-write; its write waits for it.
    RmwRead,
    /// Host write going straight to flash (no write buffer).
    Write,
    /// Write-buffer flush of one page.
    Flush,
}

impl TxnKind {
    /// True for reads (host and read-modify-write).
    #[inline]
    pub fn is_read(self) -> bool {
        matches!(self, TxnKind::Read | TxnKind::RmwRead)
    }
}

/// A flash transaction waiting in a die's queue, as the scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuedTxn {
    /// The engine's handle of the transaction.
    pub id: u32,
    /// What it does.
    pub kind: TxnKind,
    /// The host request it belongs to ([`NO_REQUEST`] for flushes).
    pub req: u32,
    /// The logical page.
    pub lpn: Lpn,
    /// Reads: the plane holding the page when the read was queued (it may have moved
    /// since: ask [`DeviceView::lookup`]). Writes: the plane the placement chose.
    pub plane: PlaneId,
    /// First byte within the page (reads).
    pub offset: u32,
    /// Bytes (reads: the requested range; writes: the page or the written part).
    pub len: u32,
    /// Arrival order over all transactions of the run (smaller = older).
    pub seq: u64,
}

/// A garbage-collection job queued or running on a die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcJobRef {
    /// The plane the job reclaims (the job's key in the FTL).
    pub plane: PlaneId,
    /// When the job started, in the transaction arrival order.
    pub seq: u64,
}

/// The queues of one die. Each is in arrival order.
#[derive(Clone, Debug, Default)]
pub struct DieQueues {
    /// Host reads and read-modify-write reads.
    pub reads: VecDeque<QueuedTxn>,
    /// Host writes and buffer flushes.
    pub writes: VecDeque<QueuedTxn>,
    /// GC jobs of the die's planes (at most one per plane).
    pub gc: VecDeque<GcJobRef>,
}

impl DieQueues {
    /// Transactions and GC jobs waiting.
    pub fn len(&self) -> usize {
        self.reads.len() + self.writes.len() + self.gc.len()
    }

    /// True if nothing waits.
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty() && self.gc.is_empty()
    }
}

/// An opportunity to issue a command on a die.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The die.
    pub die: DieId,
    /// The die is busy with a program or erase that a read may suspend (the engine has
    /// checked the device's rules and `sched.suspend_threshold`): only a read may be
    /// chosen, and it suspends that operation.
    pub suspend: bool,
    /// The head write found its plane without a free page: writes wait until GC on
    /// this die frees space.
    pub writes_blocked: bool,
}

/// Which queue a decision serves, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Choice {
    /// Nothing to issue now.
    #[default]
    Idle,
    /// Reads: one, or several on distinct planes at the same block index and page
    /// (multi-plane).
    Read,
    /// Partial reads of one plane as one SOML read.
    SomlRead,
    /// Writes: one, or several forming a multi-plane program.
    Write,
    /// Steps of the picked GC jobs, issued together.
    Gc,
}

/// A scheduler's answer: the queue and the positions (in that queue, before any
/// removal) of the transactions or GC jobs that form the command, the one it is built
/// around first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// The queue and command type.
    pub choice: Choice,
    /// Positions in the chosen queue, distinct, first = the anchor.
    pub picks: Vec<u32>,
}

impl Decision {
    /// Reset to [`Choice::Idle`] with no picks (keeps the allocation).
    #[inline]
    pub fn clear(&mut self) {
        self.choice = Choice::Idle;
        self.picks.clear();
    }

    fn set(&mut self, choice: Choice, anchor: u32) {
        self.choice = choice;
        self.picks.clear();
        self.picks.push(anchor);
    }
}

/// Chooses a die's next flash command from its queues.
pub trait TxnScheduler: Send {
    /// Fill `out` (cleared by the caller) for `slot`. With [`Slot::suspend`] only a
    /// [`Choice::Read`] or [`Choice::SomlRead`] may be returned.
    fn schedule(&mut self, slot: &Slot, q: &DieQueues, view: &dyn DeviceView, out: &mut Decision);

    /// True if the scheduler forms commands of several transactions: the engine then
    /// queues all transactions of a request (or of a batch of buffer flushes) before it
    /// asks, so they can join one command. False (`fcfs`): each transaction is offered
    /// to its die as soon as it is queued, as the pre-#9 controller did.
    fn batches(&self) -> bool {
        true
    }
}

/// The options every scheduler is built from (config `[sched]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchedulerParams {
    /// Queue arbitration between reads, writes and GC (`sched.arbiter`).
    pub arbiter: ArbiterKind,
    /// GC versus host I/O (`sched.gc`).
    pub gc: GcMode,
    /// Most planes in one multi-plane command (`sched.multiplane_width`; ≤ planes per die).
    pub width: u32,
    /// How many queued transactions of a die a scheduler looks at beyond the head
    /// (`sched.window`; Sprinkler's over-commitment depth).
    pub window: u32,
    /// SOML rules of the device (`soml` scheduler only).
    pub soml: Option<SomlRules>,
}

/// Scheduler names accepted in config (`sched.scheduler`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// [`FcfsScheduler`]: one transaction per command (the default).
    #[default]
    Fcfs,
    /// [`MultiplaneScheduler`] without SOML.
    Multiplane,
    /// [`SprinklerScheduler`].
    Sprinkler,
    /// [`MultiplaneScheduler`] that also coalesces partial reads into SOML reads.
    Soml,
}

impl SchedulerKind {
    /// Every scheduler, in documentation order.
    pub const ALL: [SchedulerKind; 4] =
        [SchedulerKind::Fcfs, SchedulerKind::Multiplane, SchedulerKind::Sprinkler, SchedulerKind::Soml];

    /// The config name (`sched.scheduler`).
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "fcfs",
            SchedulerKind::Multiplane => "multiplane",
            SchedulerKind::Sprinkler => "sprinkler",
            SchedulerKind::Soml => "soml",
        }
    }

    /// One line on what the scheduler does (for `lamina policies`).
    pub fn describe(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "one transaction per flash command, queue heads in arbiter order",
            SchedulerKind::Multiplane => {
                "the arbiter's queue head plus queued transactions on sibling planes at the same block and page, as one multi-plane command; GC jobs of several planes together"
            }
            SchedulerKind::Sprinkler => {
                "out-of-order service within a die's queue window: the request whose transactions form the widest command first (FARO), filled with other requests' transactions"
            }
            SchedulerKind::Soml => {
                "multiplane, and partial reads of one plane from different blocks coalesced into SOML reads"
            }
        }
    }

    /// Where the scheduler comes from.
    pub fn source(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "SSDsim/MQSim without advanced commands (Lamina's pre-#9 controller)",
            SchedulerKind::Multiplane => {
                "MQSim's TSU multi-plane/multi-die transaction formation (Tavakkol et al., FAST 2018)"
            }
            SchedulerKind::Sprinkler => {
                "Sprinkler: RIOS + FARO (Jung & Kandemir, HPCA 2014), from its public description"
            }
            SchedulerKind::Soml => "SOML read (soml-read seed, §4-5) on top of multiplane",
        }
    }

    /// True if the scheduler needs the device's SOML reads.
    pub fn needs_soml(self) -> bool {
        self == SchedulerKind::Soml
    }

    /// Build the scheduler.
    pub fn build(self, p: SchedulerParams) -> Box<dyn TxnScheduler> {
        let arbiter = p.arbiter.build();
        match self {
            SchedulerKind::Fcfs => Box::new(FcfsScheduler { arbiter, gc: p.gc }),
            SchedulerKind::Multiplane => Box::new(MultiplaneScheduler {
                arbiter,
                gc: p.gc,
                width: p.width,
                window: p.window,
                soml: None,
            }),
            SchedulerKind::Soml => Box::new(MultiplaneScheduler {
                arbiter,
                gc: p.gc,
                width: p.width,
                window: p.window,
                soml: p.soml,
            }),
            SchedulerKind::Sprinkler => Box::new(SprinklerScheduler {
                arbiter,
                gc: p.gc,
                width: p.width,
                window: p.window,
                passed: Vec::new(),
            }),
        }
    }
}

/// The class the arbiter serves on this slot, exactly as the pre-#9 engine chose it:
/// with one non-empty eligible queue, that queue; otherwise the arbiter's pick.
fn pick_class(arbiter: &mut dyn Arbiter, gc: GcMode, slot: &Slot, q: &DieQueues) -> Option<Class> {
    let heads = QueueHeads {
        read: q.reads.front().map(|t| t.seq),
        write: if slot.suspend || slot.writes_blocked { None } else { q.writes.front().map(|t| t.seq) },
        gc: if slot.suspend { None } else { q.gc.front().map(|j| j.seq) },
    };
    match (heads.read.is_some(), heads.write.is_some(), heads.gc.is_some()) {
        (false, false, false) => None,
        (true, false, false) => Some(Class::Read),
        (false, true, false) => Some(Class::Write),
        (false, false, true) => Some(Class::Gc),
        _ => arbiter.pick(&heads, gc),
    }
}

/// One transaction per command: the head of the queue the arbiter picks (`sched.arbiter`,
/// `sched.gc`). Byte-identical to Lamina's controller before issue #9.
pub struct FcfsScheduler {
    arbiter: Box<dyn Arbiter>,
    gc: GcMode,
}

impl TxnScheduler for FcfsScheduler {
    fn batches(&self) -> bool {
        false
    }

    fn schedule(&mut self, slot: &Slot, q: &DieQueues, _view: &dyn DeviceView, out: &mut Decision) {
        match pick_class(self.arbiter.as_mut(), self.gc, slot, q) {
            None => {}
            Some(Class::Read) => out.set(Choice::Read, 0),
            Some(Class::Write) => out.set(Choice::Write, 0),
            Some(Class::Gc) => out.set(Choice::Gc, 0),
        }
    }
}

/// The physical page of a queued read now, if it is still on `die`.
fn read_addr(view: &dyn DeviceView, die: DieId, t: &QueuedTxn) -> Option<Ppa> {
    let ppa = view.lookup(t.lpn)?;
    let g = view.geometry();
    (g.die_of_plane(g.plane_of_block(g.block_of(ppa))) == die).then_some(ppa)
}

/// (plane, block index within plane, page) of a physical page.
fn plane_block_page(view: &dyn DeviceView, ppa: Ppa) -> (PlaneId, u32, u32) {
    let g = view.geometry();
    let block = g.block_of(ppa);
    let page = (ppa.0 - g.first_page(block).0) as u32;
    (g.plane_of_block(block), g.block_index_in_plane(block), page)
}

/// Add to `out` (which holds the anchor at position `anchor`) queued reads within
/// `window` that join the anchor's multi-plane read: same die, distinct planes, same
/// block index and page; at most `width` in all. `only_req` restricts joiners to one
/// request. Returns the group size.
fn group_reads(
    view: &dyn DeviceView,
    die: DieId,
    q: &VecDeque<QueuedTxn>,
    anchor: u32,
    width: u32,
    window: u32,
    only_req: Option<u32>,
    out: &mut Vec<u32>,
) -> u32 {
    let Some(a) = read_addr(view, die, &q[anchor as usize]) else { return 1 };
    let (plane0, block0, page0) = plane_block_page(view, a);
    let mut planes = 1u64 << view.geometry().plane_index_in_die(plane0);
    let mut n = 1;
    for (i, t) in q.iter().enumerate().take(window as usize + 1) {
        if n >= width {
            break;
        }
        if i as u32 == anchor || only_req.is_some_and(|r| r != t.req) {
            continue;
        }
        let Some(p) = read_addr(view, die, t) else { continue };
        let (plane, block, page) = plane_block_page(view, p);
        let bit = 1u64 << view.geometry().plane_index_in_die(plane);
        if block == block0 && page == page0 && planes & bit == 0 {
            planes |= bit;
            out.push(i as u32);
            n += 1;
        }
    }
    n
}

/// Like [`group_reads`] for writes: queued writes whose planes' next host-write
/// addresses (as the FTL predicts them) match the anchor's. When the FTL picks the
/// plane inside the die (`ftl_picks_plane`), the next writes of the die fill its aligned
/// frontier, so any writes join.
fn group_writes(
    view: &dyn DeviceView,
    q: &VecDeque<QueuedTxn>,
    anchor: u32,
    width: u32,
    window: u32,
    only_req: Option<u32>,
    out: &mut Vec<u32>,
) -> u32 {
    let g = view.geometry();
    let t0 = q[anchor as usize];
    let die = g.die_of_plane(t0.plane);
    let mut n = 1;
    if view.ftl_picks_plane(die) {
        // The FTL fills the die's planes in order at one (block, page): the writes that
        // fit in the current row of the frontier form one multi-plane program.
        let room = view.die_row_room(die).clamp(1, width);
        for (i, t) in q.iter().enumerate().take(window as usize + 1) {
            if n >= room {
                break;
            }
            if i as u32 != anchor && only_req.is_none_or(|r| r == t.req) {
                out.push(i as u32);
                n += 1;
            }
        }
        return n;
    }
    let Some(next0) = view.next_write_addr(t0.plane) else { return 1 };
    let block0 = g.block_index_in_plane(next0.0);
    let mut planes = 1u64 << g.plane_index_in_die(t0.plane);
    for (i, t) in q.iter().enumerate().take(window as usize + 1) {
        if n >= width {
            break;
        }
        if i as u32 == anchor || only_req.is_some_and(|r| r != t.req) {
            continue;
        }
        let bit = 1u64 << g.plane_index_in_die(t.plane);
        if planes & bit != 0 || g.die_of_plane(t.plane) != die {
            continue;
        }
        let Some(next) = view.next_write_addr(t.plane) else { continue };
        if g.block_index_in_plane(next.0) == block0 && next.1 == next0.1 {
            planes |= bit;
            out.push(i as u32);
            n += 1;
        }
    }
    n
}

/// GC jobs are one per plane: take the head job and up to `width − 1` more.
fn group_gc(q: &DieQueues, width: u32, out: &mut Decision) {
    out.set(Choice::Gc, 0);
    for i in 1..q.gc.len().min(width as usize) {
        out.picks.push(i as u32);
    }
}

/// Add to `out` queued partial reads that join the anchor's SOML read: same plane,
/// different blocks, distinct block decoders, disjoint bit-line slots (soml-read §4–5).
/// Returns the number of parts.
fn group_soml(
    view: &dyn DeviceView,
    die: DieId,
    rules: SomlRules,
    q: &VecDeque<QueuedTxn>,
    anchor: u32,
    window: u32,
    out: &mut Vec<u32>,
) -> u32 {
    let g = view.geometry();
    let page_size = g.page_size_bytes();
    let t0 = &q[anchor as usize];
    if t0.kind != TxnKind::Read || t0.len >= page_size {
        return 1;
    }
    let Some(a) = read_addr(view, die, t0) else { return 1 };
    let gran = g.partial_read_bytes();
    let slots = |t: &QueuedTxn| -> u64 {
        let lo = (t.offset / gran).min(63);
        let hi = (t.offset + t.len).div_ceil(gran).min(64);
        let w = hi.saturating_sub(lo).max(1);
        (if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }) << lo
    };
    let (plane0, _, _) = plane_block_page(view, a);
    let mut used = slots(t0);
    // Blocks and decoders taken so far (small: at most `max_parts` entries).
    let mut taken = [(g.block_of(a).0, g.block_of(a).0 % rules.decoders); 16];
    let mut n = 1u32;
    for (i, t) in q.iter().enumerate().take(window as usize + 1) {
        if n >= rules.max_parts.min(16) {
            break;
        }
        if i as u32 == anchor || t.kind != TxnKind::Read || t.len >= page_size {
            continue;
        }
        let Some(p) = read_addr(view, die, t) else { continue };
        let b = g.block_of(p);
        let (plane, _, _) = plane_block_page(view, p);
        let s = slots(t);
        let clash = taken[..n as usize].iter().any(|&(tb, td)| tb == b.0 || td == b.0 % rules.decoders);
        if plane == plane0 && used & s == 0 && !clash {
            used |= s;
            taken[n as usize] = (b.0, b.0 % rules.decoders);
            out.push(i as u32);
            n += 1;
        }
    }
    n
}

/// Opportunistic multi-plane execution (MQSim's TSU): the arbiter picks the queue as
/// `fcfs` does; the command is built around that queue's head and completed with queued
/// transactions (within `sched.window`) that the device can execute with it as one
/// multi-plane operation. GC steps of several planes' jobs go together. With SOML rules
/// (the `soml` scheduler), a partial read that found no multi-plane partner is
/// coalesced with partial reads of its plane into one SOML read.
pub struct MultiplaneScheduler {
    arbiter: Box<dyn Arbiter>,
    gc: GcMode,
    width: u32,
    window: u32,
    soml: Option<SomlRules>,
}

impl TxnScheduler for MultiplaneScheduler {
    fn schedule(&mut self, slot: &Slot, q: &DieQueues, view: &dyn DeviceView, out: &mut Decision) {
        match pick_class(self.arbiter.as_mut(), self.gc, slot, q) {
            None => {}
            Some(Class::Read) => {
                out.set(Choice::Read, 0);
                let n =
                    group_reads(view, slot.die, &q.reads, 0, self.width, self.window, None, &mut out.picks);
                if n == 1
                    && let Some(rules) = self.soml
                    && group_soml(view, slot.die, rules, &q.reads, 0, self.window, &mut out.picks) > 1
                {
                    out.choice = Choice::SomlRead;
                }
            }
            Some(Class::Write) => {
                out.set(Choice::Write, 0);
                group_writes(view, &q.writes, 0, self.width, self.window, None, &mut out.picks);
            }
            Some(Class::Gc) => group_gc(q, self.width, out),
        }
    }
}

/// Sprinkler (Jung & Kandemir, HPCA 2014), at the level of one die's queue:
/// - RIOS, resource-driven I/O scheduling: a die is served when it is idle, from the
///   transactions that touch it, out of arrival order;
/// - FARO, FLP-aware request over-commitment: among the requests with transactions in
///   the first `sched.window` entries of the chosen queue, serve the one whose
///   transactions on this die form the widest command (most connected), the oldest on
///   a tie, and fill the command's remaining planes with other requests' transactions.
///
/// Reads before writes and GC per `sched.arbiter` and `sched.gc`, as in the other
/// schedulers. The head of a queue is never passed over more than `window` times in a
/// row (it is then served first): out-of-order service cannot starve it.
pub struct SprinklerScheduler {
    arbiter: Box<dyn Arbiter>,
    gc: GcMode,
    width: u32,
    window: u32,
    /// Per die and queue (reads, writes): the head's seq and how often it was passed over.
    passed: Vec<[(u64, u32); 2]>,
}

impl SprinklerScheduler {
    /// Pick the anchor of the queue's command by connectivity; fill `out.picks`.
    fn faro(
        &mut self,
        view: &dyn DeviceView,
        die: DieId,
        q: &VecDeque<QueuedTxn>,
        reads: bool,
        out: &mut Decision,
    ) {
        if self.passed.len() <= die.idx() {
            self.passed.resize(die.idx() + 1, [(u64::MAX, 0); 2]);
        }
        let head = q[0].seq;
        let passed = &mut self.passed[die.idx()][usize::from(!reads)];
        if passed.0 != head {
            *passed = (head, 0);
        }
        // A head passed over `window` times is served now.
        let end = if passed.1 >= self.window { 1 } else { q.len().min(self.window as usize + 1) };
        let mut best = (0u32, 0u32); // (connectivity, position)
        let mut scratch = Vec::new();
        for i in 0..end {
            let req = q[i].req;
            // Evaluate each request once, at its oldest transaction in the window.
            if q.iter().take(i).any(|t| t.req == req) && req != NO_REQUEST {
                continue;
            }
            scratch.clear();
            let only = (req != NO_REQUEST).then_some(req);
            let n = if reads {
                group_reads(view, die, q, i as u32, self.width, self.window, only, &mut scratch)
            } else {
                group_writes(view, q, i as u32, self.width, self.window, only, &mut scratch)
            };
            if n > best.0 {
                best = (n, i as u32);
            }
            if n >= self.width {
                break;
            }
        }
        let anchor = best.1;
        if anchor != 0 {
            self.passed[die.idx()][usize::from(!reads)].1 += 1;
        }
        out.set(if reads { Choice::Read } else { Choice::Write }, anchor);
        // Fill the command with any transactions that fit (over-commitment).
        if reads {
            group_reads(view, die, q, anchor, self.width, self.window, None, &mut out.picks);
        } else {
            group_writes(view, q, anchor, self.width, self.window, None, &mut out.picks);
        }
    }
}

impl TxnScheduler for SprinklerScheduler {
    fn schedule(&mut self, slot: &Slot, q: &DieQueues, view: &dyn DeviceView, out: &mut Decision) {
        match pick_class(self.arbiter.as_mut(), self.gc, slot, q) {
            None => {}
            Some(Class::Read) => self.faro(view, slot.die, &q.reads, true, out),
            Some(Class::Write) => self.faro(view, slot.die, &q.writes, false, out),
            Some(Class::Gc) => group_gc(q, self.width, out),
        }
    }
}
