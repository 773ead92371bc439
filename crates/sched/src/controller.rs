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
//! `sprinkler`, `soml`, `mbm` (mbm-ftl's conditional parallel read, RS). Sources and
//! rules: `docs/policies.md`.

use std::collections::VecDeque;

use lamina_nand_model::{DieId, Geometry, Lpn, PlaneId, Ppa, SomlRules};
use serde::{Deserialize, Serialize};

use crate::soml::SomlGroup;
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

    /// Entries waiting in the queue of `class`.
    #[inline]
    pub fn len_of(&self, class: Class) -> usize {
        match class {
            Class::Read => self.reads.len(),
            Class::Write => self.writes.len(),
            Class::Gc => self.gc.len(),
        }
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
///
/// Guarantees of every scheduler here: picks are distinct and within the queue; reads
/// of a [`Choice::Read`] with several picks lie (per [`DeviceView::lookup`]) on
/// distinct planes of the slot's die at one block index and page; the parts of a
/// [`Choice::SomlRead`] are partial host reads of one plane from blocks with distinct
/// decoders and disjoint bit-line slots, at most `soml.max_parts`; writes of a
/// [`Choice::Write`] lie on distinct planes whose [`DeviceView::next_write_addr`]
/// share block index and page (or, when the FTL picks planes, number at most
/// [`DeviceView::die_row_room`]), and no picked write has an older queued write of its
/// logical page.
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
    /// to its die as soon as it is queued, as the pre-#9 controller did. The engine asks
    /// this once, when it is built.
    fn batches(&self) -> bool {
        true
    }

    /// True if the scheduler chooses which waiting host request enters the device next
    /// ([`TxnScheduler::admit`]); false: first come, first admitted.
    fn reorders_admission(&self) -> bool {
        false
    }

    /// True if, whenever exactly one of the slot's eligible queues (reads; writes unless
    /// suspending or [`Slot::writes_blocked`]; GC unless suspending) holds work, the
    /// scheduler's decision is the head of that queue alone, whatever the device's state.
    /// The engine then skips the call (the common case of a free die at light load); the
    /// result is the same decision. False by default; `fcfs` says true.
    fn serves_lone_head(&self) -> bool {
        false
    }

    /// True if, whenever exactly one of the slot's eligible queues holds work and that
    /// queue holds exactly one entry, the scheduler's decision is that entry alone,
    /// whatever the device's state (implied by [`TxnScheduler::serves_lone_head`]). The
    /// engine then skips the call: a scheduler that groups transactions has nothing to
    /// group with a lone entry, and at light load most slots are of this kind. False
    /// by default; `fcfs`, `multiplane`, `soml` and `mbm` say true (`sprinkler` keeps
    /// per-queue state that the call updates, so it is always asked).
    fn serves_lone_single(&self) -> bool {
        self.serves_lone_head()
    }

    /// For a scheduler whose every decision is the head of one queue alone (`fcfs`): the
    /// class of that queue for `slot`, `Some(None)` for idle — the decision
    /// [`TxnScheduler::schedule`] would make, with the same effect on the scheduler's
    /// state — without a [`DeviceView`] or a [`Decision`]. `None` (the default): the
    /// scheduler may decide otherwise and must be asked through `schedule`. The engine
    /// asks this on every slot its lone-entry shortcut does not decide, before
    /// `schedule`, so it must answer `None` or a decision every time.
    fn pick_head(&mut self, slot: &Slot, q: &DieQueues) -> Option<Option<Class>> {
        let _ = (slot, q);
        None
    }

    /// For a scheduler whose every [`TxnScheduler::pick_head`] answer is a fixed rule of
    /// the queues' heads, with no state of its own: that rule, which the engine may
    /// apply itself instead of calling `pick_head` (`fcfs`). `None` (the default): ask
    /// `pick_head`. The engine reads this once, when it is built.
    fn head_rule(&self) -> Option<HeadRule> {
        None
    }

    /// Of the requests waiting for a device-queue slot (the host queue, oldest first;
    /// at most `sched.window + 1` of them), the index of the one to admit now. Only
    /// called when [`TxnScheduler::reorders_admission`] is true.
    fn admit(&mut self, waiting: &[Waiting]) -> usize {
        let _ = waiting;
        0
    }

    /// The `mbm` scheduler's counters of its read decisions (RS); `None` for a
    /// scheduler that keeps none.
    fn rs_counters(&self) -> Option<RsCounters> {
        None
    }
}

/// What the `mbm` scheduler's conditional parallel read (RS, mbm-ftl §IV-B, Fig. 6)
/// counted ([`TxnScheduler::rs_counters`]); the report's `rs` section (schema v7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RsCounters {
    /// Read decisions the scheduler was asked for (a lone read the engine serves
    /// without asking is not counted).
    pub decisions: u64,
    /// Decisions that formed a multi-plane read (all its reads of one host request).
    pub multi_plane: u64,
    /// Decisions where `multiplane`'s rule would have formed a wider read by joining
    /// other requests' reads, and RS did not (Fig. 6b: the first-arrived read goes
    /// without them).
    pub refused: u64,
    /// Σ over refused decisions of the reads left out (the wider group's size minus RS's).
    pub refused_reads: u64,
}

/// A host request waiting for a device-queue slot (`host.queue_depth`), as a scheduler
/// sees it when it reorders admission.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waiting {
    /// Logical pages it covers.
    pub pages: u32,
    /// Of them, pages whose die is idle now (reads: the die of the page's current
    /// physical page; writes: the die of the LPN's static plane, before placement).
    pub idle_pages: u32,
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
    /// [`MultiplaneScheduler`] with mbm-ftl's conditional parallel read (RS): a
    /// multi-plane read only of reads of one host request.
    Mbm,
}

impl SchedulerKind {
    /// Every scheduler, in documentation order.
    pub const ALL: [SchedulerKind; 5] = [
        SchedulerKind::Fcfs,
        SchedulerKind::Multiplane,
        SchedulerKind::Sprinkler,
        SchedulerKind::Soml,
        SchedulerKind::Mbm,
    ];

    /// The config name (`sched.scheduler`).
    pub fn name(self) -> &'static str {
        match self {
            SchedulerKind::Fcfs => "fcfs",
            SchedulerKind::Multiplane => "multiplane",
            SchedulerKind::Sprinkler => "sprinkler",
            SchedulerKind::Soml => "soml",
            SchedulerKind::Mbm => "mbm",
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
            SchedulerKind::Mbm => {
                "multiplane for writes and GC; a multi-plane read only when all its reads belong to one host request, else the first-arrived read alone (RS)"
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
            SchedulerKind::Mbm => {
                "MBM's parallelism-relaxed read strategy RS (Li et al., mbm-ftl §IV-B, Fig. 6)"
            }
        }
    }

    /// True if the scheduler needs the device's SOML reads.
    pub fn needs_soml(self) -> bool {
        self == SchedulerKind::Soml
    }

    /// Build the scheduler.
    pub fn build(self, p: SchedulerParams) -> Box<dyn TxnScheduler> {
        let arbiter = p.arbiter.build();
        let multiplane = |arbiter, soml, rs| MultiplaneScheduler {
            arbiter,
            gc: p.gc,
            width: p.width,
            window: p.window,
            soml,
            rs,
            scratch: Vec::new(),
            counters: RsCounters::default(),
        };
        match self {
            SchedulerKind::Fcfs => Box::new(FcfsScheduler { rule: HeadRule::new(p.arbiter, p.gc) }),
            SchedulerKind::Multiplane => Box::new(multiplane(arbiter, None, false)),
            SchedulerKind::Soml => Box::new(multiplane(arbiter, p.soml, false)),
            SchedulerKind::Mbm => Box::new(multiplane(arbiter, None, true)),
            SchedulerKind::Sprinkler => Box::new(SprinklerScheduler {
                arbiter,
                gc: p.gc,
                width: p.width,
                window: p.window,
                passed: Vec::new(),
                scratch: Vec::new(),
                admit_passed: 0,
            }),
        }
    }
}

/// The class the arbiter serves on this slot, exactly as the pre-#9 engine chose it:
/// with one non-empty eligible queue, that queue; otherwise the arbiter's pick.
/// Generic so that a built-in arbiter ([`HeadRule`]) is called directly.
#[inline]
fn pick_class<A: Arbiter + ?Sized>(arbiter: &mut A, gc: GcMode, slot: &Slot, q: &DieQueues) -> Option<Class> {
    let heads = eligible_heads(slot, q);
    match lone_class(&heads) {
        Lone::Nothing => None,
        Lone::One(c) => Some(c),
        Lone::Several => arbiter.pick(&heads, gc),
    }
}

/// The heads of the queues `slot` may serve: writes not while suspending or blocked,
/// GC not while suspending.
#[inline]
fn eligible_heads(slot: &Slot, q: &DieQueues) -> QueueHeads {
    QueueHeads {
        read: q.reads.front().map(|t| t.seq),
        write: if slot.suspend || slot.writes_blocked { None } else { q.writes.front().map(|t| t.seq) },
        gc: if slot.suspend { None } else { q.gc.front().map(|j| j.seq) },
    }
}

/// Which of a slot's eligible queues hold work.
enum Lone {
    Nothing,
    One(Class),
    Several,
}

#[inline]
fn lone_class(heads: &QueueHeads) -> Lone {
    match (heads.read.is_some(), heads.write.is_some(), heads.gc.is_some()) {
        (false, false, false) => Lone::Nothing,
        (true, false, false) => Lone::One(Class::Read),
        (false, true, false) => Lone::One(Class::Write),
        (false, false, true) => Lone::One(Class::Gc),
        _ => Lone::Several,
    }
}

/// The class `slot` must serve when exactly one of its eligible queues holds work
/// (reads; writes unless suspending or blocked; GC unless suspending): what every
/// scheduler that [`TxnScheduler::serves_lone_head`] decides without being asked.
/// `None` when no eligible queue, or several, hold work.
#[inline]
pub fn lone_eligible_class(slot: &Slot, q: &DieQueues) -> Option<Class> {
    match lone_class(&eligible_heads(slot, q)) {
        Lone::One(c) => Some(c),
        _ => None,
    }
}

/// One transaction per command: the head of the queue the arbiter picks (`sched.arbiter`,
/// `sched.gc`). Byte-identical to Lamina's controller before issue #9.
pub struct FcfsScheduler {
    rule: HeadRule,
}

/// The decision of a scheduler that serves the head of one queue alone, as a fixed
/// rule ([`TxnScheduler::head_rule`]): the one eligible queue with work, or among several
/// the pick of a built-in arbiter (which keeps no state) under a GC mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeadRule {
    arbiter: ArbiterKind,
    gc: GcMode,
}

impl HeadRule {
    /// The rule of `arbiter` under `gc`.
    pub fn new(arbiter: ArbiterKind, gc: GcMode) -> HeadRule {
        HeadRule { arbiter, gc }
    }

    /// The class to serve on `slot` (`None`: idle) — what `fcfs`'s `schedule` decides.
    #[inline]
    pub fn pick(&self, slot: &Slot, q: &DieQueues) -> Option<Class> {
        match self.arbiter {
            ArbiterKind::ReadFirst => pick_class(&mut crate::ReadFirst, self.gc, slot, q),
            ArbiterKind::Fcfs => pick_class(&mut crate::Fcfs, self.gc, slot, q),
        }
    }
}

impl TxnScheduler for FcfsScheduler {
    fn batches(&self) -> bool {
        false
    }

    fn serves_lone_head(&self) -> bool {
        true
    }

    fn schedule(&mut self, slot: &Slot, q: &DieQueues, _view: &dyn DeviceView, out: &mut Decision) {
        match self.rule.pick(slot, q) {
            None => {}
            Some(Class::Read) => out.set(Choice::Read, 0),
            Some(Class::Write) => out.set(Choice::Write, 0),
            Some(Class::Gc) => out.set(Choice::Gc, 0),
        }
    }

    fn pick_head(&mut self, slot: &Slot, q: &DieQueues) -> Option<Option<Class>> {
        Some(self.rule.pick(slot, q))
    }

    fn head_rule(&self) -> Option<HeadRule> {
        Some(self.rule)
    }
}

/// The physical page of a queued read now, if it is still on `die`.
fn read_addr(view: &dyn DeviceView, die: DieId, t: &QueuedTxn) -> Option<Ppa> {
    let ppa = view.lookup(t.lpn)?;
    let g = view.geometry();
    (g.die_of_ppa(ppa) == die).then_some(ppa)
}

/// (plane, block index within plane, page) of a physical page.
fn plane_block_page(view: &dyn DeviceView, ppa: Ppa) -> (PlaneId, u32, u32) {
    let g = view.geometry();
    let block = g.block_of(ppa);
    let page = (ppa.0 - g.first_page(block).0) as u32;
    (g.plane_of_block(block), g.block_index_in_plane(block), page)
}

/// The bit of a plane in a mask of a die's planes. Geometry does not bound the planes
/// per die; indices ≥ 64 share bits modulo 64, which can only refuse a join, never
/// admit one plane twice (a plane always maps to the same bit).
#[inline]
fn plane_bit(g: &Geometry, plane: PlaneId) -> u64 {
    1u64 << (g.plane_index_in_die(plane) % 64)
}

/// True if no write older than position `i` of the write queue `q` writes the same
/// logical page. Only such writes may be picked: serving a page's newer write before
/// (or in one command with) its older one would leave the older data mapped.
#[inline]
fn oldest_write_of_its_page(q: &VecDeque<QueuedTxn>, i: usize) -> bool {
    let lpn = q[i].lpn;
    !q.iter().take(i).any(|t| t.lpn == lpn)
}

/// Extend the multi-plane read `group` (positions in `q`, `group[0]` the anchor) with
/// queued reads among the first `window + 1` entries of `q` that the device reads with
/// the anchor in one command: still on `die`, on planes the group does not hold yet,
/// at the anchor's block index and page (mbm-ftl §II-A; the device's `check_multi`);
/// at most `width` in all. `only_req` restricts joiners to one request. Returns the
/// group's size.
fn group_reads(
    view: &dyn DeviceView,
    die: DieId,
    q: &VecDeque<QueuedTxn>,
    width: u32,
    window: u32,
    only_req: Option<u32>,
    group: &mut Vec<u32>,
) -> u32 {
    if nothing_can_join(q, width, group) {
        return group.len() as u32;
    }
    let g = view.geometry();
    let Some(a) = read_addr(view, die, &q[group[0] as usize]) else { return group.len() as u32 };
    let (plane0, block0, page0) = plane_block_page(view, a);
    let mut planes = plane_bit(g, plane0);
    for &i in &group[1..] {
        if let Some(p) = read_addr(view, die, &q[i as usize]) {
            planes |= plane_bit(g, plane_block_page(view, p).0);
        }
    }
    for (i, t) in q.iter().enumerate().take(window as usize + 1) {
        if group.len() as u32 >= width {
            break;
        }
        if only_req.is_some_and(|r| r != t.req) || group.contains(&(i as u32)) {
            continue;
        }
        let Some(p) = read_addr(view, die, t) else { continue };
        let (plane, block, page) = plane_block_page(view, p);
        let bit = plane_bit(g, plane);
        if block == block0 && page == page0 && planes & bit == 0 {
            planes |= bit;
            group.push(i as u32);
        }
    }
    group.len() as u32
}

/// True if no queued transaction can join `group` (distinct positions in `q`): every
/// entry is in it already, or it holds `width` (the most a command takes; the group
/// functions' loops stop there). The group functions then return at once, with the
/// group unchanged, as their scans would: at light load most decisions are of a queue
/// holding the anchor alone, and the scan's setup (the anchor's address through the
/// device view) is most of their cost.
#[inline]
fn nothing_can_join(q: &VecDeque<QueuedTxn>, width: u32, group: &[u32]) -> bool {
    #[cfg(test)]
    if tests::FULL_SCAN.get() {
        return false;
    }
    group.len() >= q.len() || group.len() as u32 >= width
}

/// Like [`group_reads`] for writes: queued writes of the die whose planes' next
/// host-write addresses (as the FTL predicts them) have the anchor's block index and
/// page, on planes the group does not hold yet. When the FTL picks the plane inside the
/// die (`ftl_picks_plane`), the next writes fill the die's aligned frontier row, so any
/// writes join, up to the row's room. Writes that have an older queued write of their
/// page never join ([`oldest_write_of_its_page`]).
fn group_writes(
    view: &dyn DeviceView,
    q: &VecDeque<QueuedTxn>,
    width: u32,
    window: u32,
    only_req: Option<u32>,
    group: &mut Vec<u32>,
) -> u32 {
    if nothing_can_join(q, width, group) {
        return group.len() as u32;
    }
    let g = view.geometry();
    let t0 = q[group[0] as usize];
    let die = g.die_of_plane(t0.plane);
    let limit = if view.ftl_picks_plane(die) { view.die_row_room(die).clamp(1, width.max(1)) } else { width };
    let next0 = if view.ftl_picks_plane(die) {
        None
    } else {
        match view.next_write_addr(t0.plane) {
            Some((b, page)) => Some((g.block_index_in_plane(b), page)),
            None => return group.len() as u32,
        }
    };
    let mut planes = group.iter().fold(0u64, |m, &i| m | plane_bit(g, q[i as usize].plane));
    // Planes whose next write address is not the anchor's: it does not change during
    // this call, so none of their writes can join. When every plane of the die is in
    // the group or here, nothing further can join.
    let mut refused = 0u64;
    let all = if g.planes_per_die() >= 64 { u64::MAX } else { (1u64 << g.planes_per_die()) - 1 };
    for (i, t) in q.iter().enumerate().take(window as usize + 1) {
        if group.len() as u32 >= limit {
            break;
        }
        if only_req.is_some_and(|r| r != t.req) || group.contains(&(i as u32)) {
            continue;
        }
        if let Some(key) = next0 {
            // The FTL will program each write at its plane's next address.
            if (planes | refused) & all == all {
                break;
            }
            let bit = plane_bit(g, t.plane);
            if (planes | refused) & bit != 0 || g.die_of_plane(t.plane) != die {
                continue;
            }
            let Some((b, page)) = view.next_write_addr(t.plane) else {
                refused |= bit;
                continue;
            };
            if (g.block_index_in_plane(b), page) != key {
                refused |= bit;
                continue;
            }
            if !oldest_write_of_its_page(q, i) {
                continue;
            }
            planes |= bit;
        } else if !oldest_write_of_its_page(q, i) {
            continue;
        }
        group.push(i as u32);
    }
    group.len() as u32
}

/// GC jobs are one per plane: take the head job and up to `width − 1` more.
fn group_gc(q: &DieQueues, width: u32, out: &mut Decision) {
    out.set(Choice::Gc, 0);
    for i in 1..q.gc.len().min(width as usize) {
        out.picks.push(i as u32);
    }
}

/// The bit-line slots of a partial read as a mask, exactly as the device's SOML check
/// builds it (crates/nand-model/src/device.rs, `slot_mask`): slots `offset / gran ..
/// ⌈(offset + len) / gran⌉`, those ≥ 64 folded onto bit 63 (stricter than the
/// hardware for granularities finer than page / 64, never looser than the device).
#[inline]
fn soml_slots(t: &QueuedTxn, gran: u32) -> u64 {
    let lo = (t.offset / gran).min(63);
    let hi = t.offset.saturating_add(t.len).div_ceil(gran).min(64);
    if hi <= lo {
        return 1 << lo;
    }
    let w = hi - lo;
    (if w >= 64 { u64::MAX } else { (1u64 << w) - 1 }) << lo
}

/// Extend `group` (holding only the anchor, a partial host read) with queued partial
/// reads that join its SOML read (soml-read §5, Algorithm 1, greedy in queue order, by
/// [`crate::soml::SomlGroup`]'s rule): same plane, distinct block decoders
/// (`block index % decoders`; one block always shares its decoder), disjoint bit-line
/// slots; at most `max_parts` in all. Returns the number of parts.
fn group_soml(
    view: &dyn DeviceView,
    die: DieId,
    rules: SomlRules,
    q: &VecDeque<QueuedTxn>,
    window: u32,
    group: &mut Vec<u32>,
) -> u32 {
    debug_assert_eq!(group.len(), 1, "a SOML read is built around a lone anchor");
    let g = view.geometry();
    let page_size = g.page_size_bytes();
    let partial = |t: &QueuedTxn| t.kind == TxnKind::Read && t.len > 0 && t.len < page_size;
    let t0 = q[group[0] as usize];
    if !partial(&t0) {
        return 1;
    }
    let Some(a) = read_addr(view, die, &t0) else { return 1 };
    let (plane0, block0, _) = plane_block_page(view, a);
    let gran = g.partial_read_bytes();
    let mut soml = SomlGroup::new();
    soml.add(soml_slots(&t0, gran), block0 % rules.decoders);
    for (i, t) in q.iter().enumerate().take(window as usize + 1) {
        if soml.len() >= rules.max_parts {
            break;
        }
        if i as u32 == group[0] || !partial(t) {
            continue;
        }
        let Some(p) = read_addr(view, die, t) else { continue };
        let (plane, block, _) = plane_block_page(view, p);
        let (s, d) = (soml_slots(t, gran), block % rules.decoders);
        if plane != plane0 || !soml.admits(s, d, rules.max_parts) {
            continue;
        }
        soml.add(s, d);
        group.push(i as u32);
    }
    group.len() as u32
}

/// Opportunistic multi-plane execution (MQSim's TSU): the arbiter picks the queue as
/// `fcfs` does; the command is built around that queue's head and completed with queued
/// transactions (within `sched.window`) that the device can execute with it as one
/// multi-plane operation. GC steps of several planes' jobs go together. With SOML rules
/// (the `soml` scheduler), a partial read that found no multi-plane partner is
/// coalesced with partial reads of its plane into one SOML read.
///
/// With RS (the `mbm` scheduler, mbm-ftl §IV-B, Fig. 6), a read joins the head read only
/// if both belong to the same host request: a multi-plane read serves one request, so
/// the first-arrived read never waits for other requests' data transfers; a head read
/// of no request (a read-modify-write read of an undecided write) goes alone.
pub struct MultiplaneScheduler {
    arbiter: Box<dyn Arbiter>,
    gc: GcMode,
    width: u32,
    window: u32,
    soml: Option<SomlRules>,
    /// RS: multi-plane reads only of one request's reads.
    rs: bool,
    /// Scratch for RS's comparison with the unconditional group (allocated once).
    scratch: Vec<u32>,
    /// RS's counters.
    counters: RsCounters,
}

impl MultiplaneScheduler {
    /// RS (Fig. 6): extend `group` (the head read alone) with reads of the head's
    /// request only, and count what `multiplane`'s rule would have joined besides.
    fn rs_reads(&mut self, view: &dyn DeviceView, die: DieId, q: &VecDeque<QueuedTxn>, group: &mut Vec<u32>) {
        debug_assert_eq!(group, &[0], "RS builds around the head read");
        let req = q[0].req;
        let n = if req == NO_REQUEST {
            1
        } else {
            group_reads(view, die, q, self.width, self.window, Some(req), group)
        };
        let mut all = std::mem::take(&mut self.scratch);
        all.clear();
        all.push(0);
        let m = group_reads(view, die, q, self.width, self.window, None, &mut all);
        self.scratch = all;
        let c = &mut self.counters;
        c.decisions += 1;
        c.multi_plane += u64::from(n > 1);
        if m > n {
            c.refused += 1;
            c.refused_reads += u64::from(m - n);
        }
    }
}

impl TxnScheduler for MultiplaneScheduler {
    fn serves_lone_single(&self) -> bool {
        // A lone read groups with nothing (`group_reads`, `group_soml` skip the anchor),
        // a lone write likewise, a lone GC job is taken alone (`group_gc`).
        true
    }

    fn schedule(&mut self, slot: &Slot, q: &DieQueues, view: &dyn DeviceView, out: &mut Decision) {
        match pick_class(self.arbiter.as_mut(), self.gc, slot, q) {
            None => {}
            Some(Class::Read) if self.rs => {
                out.set(Choice::Read, 0);
                self.rs_reads(view, slot.die, &q.reads, &mut out.picks);
            }
            Some(Class::Read) => {
                out.set(Choice::Read, 0);
                let n = group_reads(view, slot.die, &q.reads, self.width, self.window, None, &mut out.picks);
                if n == 1
                    && let Some(rules) = self.soml
                    && group_soml(view, slot.die, rules, &q.reads, self.window, &mut out.picks) > 1
                {
                    out.choice = Choice::SomlRead;
                }
            }
            Some(Class::Write) => {
                out.set(Choice::Write, 0);
                group_writes(view, &q.writes, self.width, self.window, None, &mut out.picks);
            }
            Some(Class::Gc) => group_gc(q, self.width, out),
        }
    }

    fn rs_counters(&self) -> Option<RsCounters> {
        self.rs.then_some(self.counters)
    }
}

/// Sprinkler (Jung & Kandemir, HPCA 2014), at the level of one die's queue:
/// - RIOS, resource-driven I/O scheduling: a die is served when it is idle, from the
///   transactions that touch it, out of arrival order;
/// - FARO, FLP-aware request over-commitment: among the requests with transactions in
///   the first `sched.window + 1` entries of the chosen queue, serve the one whose
///   transactions on this die form the widest command (most connected; a request's
///   connectivity is the widest command any of its transactions anchors with the
///   request's own transactions), the oldest request on a tie, and fill the command's
///   remaining planes with other requests' transactions. Buffer flushes count as one
///   request.
///
/// Reads before writes and GC per `sched.arbiter` and `sched.gc`, as in the other
/// schedulers. The head of a queue is passed over (left out of the command) at most
/// `window` times in a row; then it anchors the command: out-of-order service cannot
/// starve it. A write with an older queued write of its page is never picked.
///
/// RIOS at the device queue: when `host.queue_depth` holds requests back, the request
/// admitted next is, of the first `window + 1` waiting, the one with the largest share
/// of its pages on idle dies (the oldest on a tie); the oldest waiting request is passed
/// over at most `window` times in a row.
pub struct SprinklerScheduler {
    arbiter: Box<dyn Arbiter>,
    gc: GcMode,
    width: u32,
    window: u32,
    /// Per die and queue (reads, writes): the head's seq and how often it was passed over.
    passed: Vec<[(u64, u32); 2]>,
    /// Scratch for evaluating candidate commands (allocated once).
    scratch: Vec<u32>,
    /// How often the oldest waiting host request was passed over in a row.
    admit_passed: u32,
}

impl SprinklerScheduler {
    /// Extend `group` with reads or writes that join it (see [`group_reads`]).
    fn group(
        &self,
        view: &dyn DeviceView,
        die: DieId,
        q: &VecDeque<QueuedTxn>,
        reads: bool,
        only_req: Option<u32>,
        group: &mut Vec<u32>,
    ) -> u32 {
        if reads {
            group_reads(view, die, q, self.width, self.window, only_req, group)
        } else {
            group_writes(view, q, self.width, self.window, only_req, group)
        }
    }

    /// FARO: choose the anchor by connectivity and fill `out`.
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
        let k = usize::from(!reads);
        let passed = &mut self.passed[die.idx()][k];
        if passed.0 != q[0].seq {
            *passed = (q[0].seq, 0);
        }
        // A head passed over `window` times anchors the command now.
        let end = if passed.1 >= self.window { 1 } else { q.len().min(self.window as usize + 1) };
        let width = self.width.max(1);
        let mut scratch = std::mem::take(&mut self.scratch);
        // (connectivity, anchor). Requests are visited in age order (queue order of
        // their oldest transaction) and only a strictly wider command replaces the
        // best, so ties go to the oldest request, and within it to its oldest anchor.
        let mut best = (0u32, 0usize);
        'requests: for i in 0..end {
            let req = q[i].req;
            if q.iter().take(i).any(|t| t.req == req) {
                continue; // visited at its oldest transaction
            }
            for j in i..end {
                if q[j].req != req || (!reads && !oldest_write_of_its_page(q, j)) {
                    continue;
                }
                scratch.clear();
                scratch.push(j as u32);
                let n = self.group(view, die, q, reads, Some(req), &mut scratch);
                if n > best.0 {
                    best = (n, j);
                }
                if n >= width {
                    break 'requests; // no later (younger) request can do better
                }
            }
        }
        self.scratch = scratch;
        let anchor = best.1;
        out.set(if reads { Choice::Read } else { Choice::Write }, anchor as u32);
        // The request's own transactions first, then over-commitment: any that fit.
        self.group(view, die, q, reads, Some(q[anchor].req), &mut out.picks);
        self.group(view, die, q, reads, None, &mut out.picks);
        if !out.picks.contains(&0) {
            self.passed[die.idx()][k].1 += 1;
        }
    }
}

impl TxnScheduler for SprinklerScheduler {
    fn reorders_admission(&self) -> bool {
        true
    }

    fn admit(&mut self, waiting: &[Waiting]) -> usize {
        if waiting.is_empty() || self.admit_passed >= self.window {
            self.admit_passed = 0;
            return 0;
        }
        // Largest idle share p_i / n_i; compare p_i · n_j > p_j · n_i exactly.
        let mut best = 0;
        for (i, w) in waiting.iter().enumerate().skip(1) {
            let b = &waiting[best];
            if u64::from(w.idle_pages) * u64::from(b.pages.max(1))
                > u64::from(b.idle_pages) * u64::from(w.pages.max(1))
            {
                best = i;
            }
        }
        if best == 0 {
            self.admit_passed = 0;
        } else {
            self.admit_passed += 1;
        }
        best
    }

    fn schedule(&mut self, slot: &Slot, q: &DieQueues, view: &dyn DeviceView, out: &mut Decision) {
        match pick_class(self.arbiter.as_mut(), self.gc, slot, q) {
            None => {}
            Some(Class::Read) => self.faro(view, slot.die, &q.reads, true, out),
            Some(Class::Write) => self.faro(view, slot.die, &q.writes, false, out),
            Some(Class::Gc) => group_gc(q, self.width, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use proptest::strategy::ValueTree;

    use super::*;
    use crate::mock::MockView;

    /// A two-die device of `planes` planes per die, 4 blocks of 4 pages.
    fn view(planes: u32) -> MockView {
        let mut c = lamina_nand_model::preset("mqsim-default").expect("preset");
        let g = &mut c.geometry;
        (g.channels, g.chips_per_channel, g.dies_per_chip, g.planes_per_die) = (1, 1, 2, planes);
        (g.blocks_per_plane, g.pages_per_block) = (4, 4);
        MockView::new(&c.validate().expect("valid test device"))
    }

    /// One queued transaction of a random state: LPN (few, so pages repeat), request,
    /// plane (any of both dies), and where the view maps its page (`None`: unmapped).
    type Entry = (u64, u32, u32, Option<(u32, u32, u32)>);

    fn entry(planes: u32) -> impl Strategy<Value = Entry> {
        // Mapped pages mostly on die 0 (the slot's die), at two block/page pairs, so
        // that reads often share an address.
        (0u64..8, 0u32..3, 0..2 * planes, prop::option::weighted(0.9, (0..planes + 1, 0u32..2, 0u32..1)))
    }

    /// A random die state and the arguments of one group call.
    #[derive(Debug)]
    struct Case {
        planes: u32,
        entries: Vec<Entry>,
        /// Per plane: the next write address (block, page) or unknown.
        next: Vec<Option<(u32, u32)>>,
        /// Die 0's aligned row room (die-aligned allocation) or per-plane allocation.
        aligned: Option<u32>,
        width: u32,
        window: u32,
        only_req: Option<u32>,
        /// The group before the call: distinct positions, the anchor first.
        group: Vec<u32>,
    }

    fn case() -> impl Strategy<Value = Case> {
        (1u32..=4)
            .prop_flat_map(|planes| {
                let next = prop::collection::vec(
                    prop::option::weighted(0.9, (0u32..2, 0u32..2)),
                    2 * planes as usize,
                );
                (
                    Just(planes),
                    prop::collection::vec(entry(planes), 1..8),
                    next,
                    prop::option::of(0u32..4),
                    1..=planes + 1,
                    0u32..6,
                    prop::option::of(0u32..3),
                    any::<u64>(),
                )
            })
            .prop_map(|(planes, entries, next, aligned, width, window, only_req, pick)| {
                // A group of 1 ..= len distinct positions, chosen by the bits of `pick`.
                let n = entries.len() as u32;
                let mut group = vec![(pick % u64::from(n)) as u32];
                for i in 0..n {
                    if !group.contains(&i) && (pick >> (8 + 3 * i)) & 7 == 0 {
                        group.push(i);
                    }
                }
                Case { planes, entries, next, aligned, width, window, only_req, group }
            })
    }

    impl Case {
        fn state(&self) -> (MockView, VecDeque<QueuedTxn>) {
            let mut v = view(self.planes);
            for (p, n) in self.next.iter().enumerate() {
                match n {
                    Some((block, page)) => v.set_next_write(PlaneId(p as u32), *block, *page),
                    None => v.next_page[p] = None,
                }
            }
            v.aligned_rows[0] = self.aligned;
            let mut q = VecDeque::new();
            for (seq, &(lpn, req, plane, at)) in self.entries.iter().enumerate() {
                if let Some((p, block, page)) = at {
                    v.map_lpn(Lpn(lpn), PlaneId(p), block, page);
                }
                let (kind, len) = (TxnKind::Read, v.geometry().page_size_bytes());
                q.push_back(QueuedTxn {
                    id: seq as u32,
                    kind,
                    req,
                    lpn: Lpn(lpn),
                    plane: PlaneId(plane),
                    offset: 0,
                    len,
                    seq: seq as u64,
                });
            }
            (v, q)
        }
    }

    std::thread_local! {
        /// Set by the tests below: `nothing_can_join` says false, so the group
        /// functions always scan (the reference the shortcut is compared with).
        pub(super) static FULL_SCAN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// `f` run on a copy of `group`, with the shortcut (`full_scan` false) or without:
    /// the size it returns and the group it leaves.
    fn grouped(group: &[u32], full_scan: bool, f: impl Fn(&mut Vec<u32>) -> u32) -> (u32, Vec<u32>) {
        FULL_SCAN.set(full_scan);
        let mut g = group.to_vec();
        let n = f(&mut g);
        FULL_SCAN.set(false);
        (n, g)
    }

    /// The write queue of a case: its entries as writes on their planes.
    fn as_writes(q: &VecDeque<QueuedTxn>) -> VecDeque<QueuedTxn> {
        q.iter().map(|t| QueuedTxn { kind: TxnKind::Write, ..*t }).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

        /// `group_reads` and `group_writes` return at once when `nothing_can_join`; in
        /// every state their answer (size and group) is the full scan's.
        #[test]
        fn the_group_shortcut_answers_as_the_scan(c in case()) {
            let (v, q) = c.state();
            let w = as_writes(&q);
            let reads = |g: &mut Vec<u32>| group_reads(&v, DieId(0), &q, c.width, c.window, c.only_req, g);
            let writes = |g: &mut Vec<u32>| group_writes(&v, &w, c.width, c.window, c.only_req, g);
            prop_assert_eq!(grouped(&c.group, false, reads), grouped(&c.group, true, reads));
            prop_assert_eq!(grouped(&c.group, false, writes), grouped(&c.group, true, writes));
        }
    }

    #[test]
    fn the_group_shortcut_is_taken_and_the_scan_joins_in_the_property_cases() {
        // Guard against a vacuous property: of the cases the property test draws, many
        // take the shortcut and many others form a wider group by the scan.
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut short, mut joined) = (0, 0);
        for _ in 0..4000 {
            let c = case().new_tree(&mut runner).expect("case").current();
            let (v, q) = c.state();
            let w = as_writes(&q);
            short += usize::from(nothing_can_join(&q, c.width, &c.group));
            let reads = |g: &mut Vec<u32>| group_reads(&v, DieId(0), &q, c.width, c.window, c.only_req, g);
            let writes = |g: &mut Vec<u32>| group_writes(&v, &w, c.width, c.window, c.only_req, g);
            joined += usize::from(grouped(&c.group, true, reads).1.len() > c.group.len());
            joined += usize::from(grouped(&c.group, true, writes).1.len() > c.group.len());
        }
        assert!(short > 1000 && joined > 200, "shortcut {short}, joined {joined} of 2 × 4000");
    }
}
