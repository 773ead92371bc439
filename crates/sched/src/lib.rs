//! Placement and scheduling policies for Lamina.
//!
//! The engine asks two questions through the traits here, so new policies plug in
//! without touching the event loop:
//! - [`Placement`]: on which plane does a host write sub-request go? (static striping
//!   by LPN, or a dynamic choice from the device state seen through [`DeviceView`]);
//! - [`Arbiter`]: when a die is free, which of its queues (host reads, host writes,
//!   garbage collection) is served next? Within a queue service is first-come first-served.
//!
//! Policies see the device only through [`DeviceView`], never the engine's internals;
//! [`mock::MockView`] is a hand-built view for tests and experiments.
//!
//! Placements ([`PlacementKind`], config `sched.placement`): `static`, `write-order`,
//! `queue`, `state`, `dynamic`, `uq` (state-based-die-binding), `ocr`, `lacr`
//! (layer-aware-chip-redirection) and `mcs` (mbm-ftl's chip selection with
//! Channel_Max_Subs, [`mbm`]). Rules, sources and open points: `docs/policies.md`.

use lamina_nand_model::{BlockId, ChannelId, DieId, Geometry, Lpn, PlaneId, Ppa, SimTime, Timing};
use serde::{Deserialize, Serialize};

pub mod controller;
pub mod lacr;
pub mod mbm;
pub mod mock;
pub mod placement;
pub mod soml;

pub use controller::{
    Choice, Decision, DieQueues, FcfsScheduler, GcJobRef, HeadRule, MultiplaneScheduler, NO_REQUEST,
    QueuedTxn, RsCounters, SchedulerKind, SchedulerParams, Slot, SprinklerScheduler, TxnKind, TxnScheduler,
    Waiting, lone_eligible_class,
};
pub use lacr::{
    ChipRedirect, LacrParams, PendingEntry, PendingSums, PendingWriteLayer, ReadPage, ReadScope,
    RedirectCounters,
};
pub use mbm::{McsCounters, McsOverflow, McsParams, McsPlacement};
pub use placement::{
    DynamicPlacement, PlacementKind, QueuePlacement, StatePlacement, StaticPlacement, UqPlacement,
    WriteOrderPlacement,
};

/// A flash transaction waiting in (or running from) a die's queues, as a policy sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingOp {
    /// A read (host or read-modify-write); otherwise a program.
    pub is_read: bool,
    /// Bytes to transfer over the channel.
    pub bytes: u32,
    /// Page index within its block, if already known (reads: the mapped page; writes:
    /// `None` until the FTL allocates the page when the die takes the write).
    pub page: Option<u32>,
    /// Target plane (writes: the plane the placement chose; reads: the plane holding the
    /// page when it was queued).
    pub plane: PlaneId,
}

/// Read-only view of the device state a policy may consult.
pub trait DeviceView {
    /// The geometry.
    fn geometry(&self) -> &Geometry;
    /// The device timing (command, array, transfer times; per-layer factors).
    fn timing(&self) -> &Timing;
    /// Current simulated time.
    fn now(&self) -> SimTime;
    /// True if the die has no operation in flight (engine) and no array or register
    /// reservation at `now()` (device).
    fn die_idle(&self, die: DieId) -> bool;
    /// True if the channel bus is free at `now()`.
    fn channel_idle(&self, channel: ChannelId) -> bool;
    /// When the die's current reservations end (`now()` if idle): the remaining time of its
    /// in-flight operation is `die_free_at − now` (LaCR's T_remain).
    fn die_free_at(&self, die: DieId) -> SimTime;
    /// Transactions waiting (not yet issued) in the die's queues.
    fn die_queue_len(&self, die: DieId) -> u32;
    /// Call `f` for each transaction waiting in the die's host queues (reads, then
    /// writes, each in FCFS order).
    fn for_each_pending(&self, die: DieId, f: &mut dyn FnMut(PendingOp));
    /// Running sums over the transactions [`DeviceView::for_each_pending`] visits on
    /// `die`, kept as they are queued and taken, so that OCR, LaCR and MCS read a die's
    /// queue without visiting every transaction in it (a scan per placed write made a
    /// saturated trace quadratic); `None` if the view keeps none (the policies then
    /// scan). A read's page is the one it had when queued.
    fn pending_sums(&self, die: DieId) -> Option<&PendingSums> {
        let _ = die;
        None
    }
    /// True if a garbage-collection job is queued or running on the die.
    fn die_gc_active(&self, die: DieId) -> bool;
    /// Pages programmed on the die so far (host and GC).
    fn die_writes(&self, die: DieId) -> u64;
    /// The page index (within its block) the plane's next host write will get, if the FTL
    /// knows it (the active block's write pointer).
    fn next_write_page(&self, plane: PlaneId) -> Option<u32>;
    /// The physical page holding `lpn` now (the FTL's mapping), `None` if unmapped.
    fn lookup(&self, lpn: Lpn) -> Option<Ppa>;
    /// The block and page the plane's next host write will get, as the FTL predicts it
    /// (`None` if it cannot tell). Schedulers compare these to form multi-plane programs.
    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)>;
    /// True if the FTL chooses the plane of a host write inside its die at write time
    /// (die-aligned allocation: the die's planes share one aligned write frontier).
    fn ftl_picks_plane(&self, die: DieId) -> bool;
    /// With [`DeviceView::ftl_picks_plane`]: host writes the die's current frontier row
    /// still takes at one block and page (planes per die minus the planes already
    /// written in the row); 1 otherwise.
    fn die_row_room(&self, die: DieId) -> u32;
}

/// Chooses the plane of a host write sub-request.
pub trait Placement: Send {
    /// Plane for logical page `lpn`; `static_plane` is the FTL's striping-order choice.
    /// `None` defers the decision: the engine keeps the sub-request in an undecided FCFS
    /// queue and asks again (oldest first) whenever a die or channel becomes idle.
    fn place_write(&mut self, lpn: Lpn, static_plane: PlaneId, view: &dyn DeviceView) -> Option<PlaneId>;

    /// The chip-redirection policies' counters of their own decisions (how often OCR
    /// and LaCR would choose differently, by how much their estimates differ); `None`
    /// for a policy that keeps none.
    fn redirect_counters(&self) -> Option<RedirectCounters> {
        None
    }

    /// A host request (or a batch of buffer flushes) of `pages` sub-writes is about to be
    /// placed: the engine calls this once, then [`Placement::place_write`] for each of
    /// them in order. Policies that place a request as a whole (`mcs`) use it; the
    /// others ignore it.
    fn begin_request(&mut self, pages: u32) {
        let _ = pages;
    }

    /// The `mcs` policy's counters of its decisions; `None` for other policies.
    fn mcs_counters(&self) -> Option<McsCounters> {
        None
    }

    /// A host read of `pages` logical pages from `first` arrived (MBM's RS marks the
    /// areas of long reads read-intensive); the others ignore it.
    fn note_read(&mut self, first: Lpn, pages: u32) {
        let _ = (first, pages);
    }

    /// True if the policy is static placement: [`Placement::place_write`] always
    /// answers `Some(static_plane)` and the policy keeps no state, so that the engine
    /// may take the static plane without asking (no device view built per write).
    /// Default: false.
    fn is_static(&self) -> bool {
        false
    }

    /// True if the policy reads [`DeviceView::pending_sums`], so that the engine keeps
    /// them (a cost on every queued transaction otherwise spent for nothing). Default:
    /// false.
    fn uses_pending_sums(&self) -> bool {
        false
    }

    /// True if the pending sums must count each queued read's array time at the page
    /// its logical page maps to now, not when it was queued (OCR and LaCR with
    /// `read_page = "current"`). The engine then keeps them only if the FTL logs the
    /// pages whose mapping changes (`lamina_ftl::Ftl::log_moves`) and refreshes the
    /// reads of those pages before each decision; otherwise it keeps none and the
    /// policy scans the queues. Default: false.
    fn pending_reads_current(&self) -> bool {
        false
    }
}

/// A class of queued flash transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Host reads.
    Read,
    /// Host writes (including buffer flushes).
    Write,
    /// Garbage-collection steps.
    Gc,
}

/// The heads of a die's three queues: the arrival sequence number of the oldest
/// transaction in each, or `None` if empty. Smaller = older.
#[derive(Clone, Copy, Debug, Default)]
pub struct QueueHeads {
    /// Oldest host read.
    pub read: Option<u64>,
    /// Oldest host write.
    pub write: Option<u64>,
    /// Oldest GC step.
    pub gc: Option<u64>,
}

/// How GC competes with host I/O (`sched.gc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcMode {
    /// A started GC job runs to completion before the die serves host I/O (SSDsim).
    #[default]
    Blocking,
    /// Host reads may run between GC steps (GC still precedes host writes).
    Preemptible,
}

impl GcMode {
    /// Every mode, in documentation order.
    pub const ALL: [GcMode; 2] = [GcMode::Blocking, GcMode::Preemptible];

    /// The config name (`sched.gc`).
    pub fn name(self) -> &'static str {
        match self {
            GcMode::Blocking => "blocking",
            GcMode::Preemptible => "preemptible",
        }
    }

    /// One line on what the mode does (for `lamina policies`).
    pub fn describe(self) -> &'static str {
        match self {
            GcMode::Blocking => "a started GC job runs to completion before the die serves host I/O",
            GcMode::Preemptible => "host reads may run between GC steps (GC still precedes host writes)",
        }
    }

    /// Where the mode comes from.
    pub fn source(self) -> &'static str {
        match self {
            GcMode::Blocking => "SSDsim's GC (docs/model.md, transactions and arbitration)",
            GcMode::Preemptible => {
                "Lamina option, cf. semi-preemptible GC (Lee et al., ISPASS 2011); docs/model.md"
            }
        }
    }
}

/// Chooses which queue a free die serves next. The engine consults it only when at least
/// two queues are non-empty (with one, that queue is served).
pub trait Arbiter: Send {
    /// The class to serve, or `None` if all queues are empty.
    fn pick(&mut self, heads: &QueueHeads, gc: GcMode) -> Option<Class>;
}

/// FR-FCFS-style read priority: reads before writes (reads are short and block
/// applications), FCFS within a class. GC per [`GcMode`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ReadFirst;

impl Arbiter for ReadFirst {
    #[inline]
    fn pick(&mut self, h: &QueueHeads, gc: GcMode) -> Option<Class> {
        match gc {
            GcMode::Blocking if h.gc.is_some() => Some(Class::Gc),
            _ if h.read.is_some() => Some(Class::Read),
            _ if h.gc.is_some() => Some(Class::Gc),
            _ if h.write.is_some() => Some(Class::Write),
            _ => None,
        }
    }
}

/// Plain FCFS across classes: the oldest head goes first (GC blocking still first).
#[derive(Clone, Copy, Debug, Default)]
pub struct Fcfs;

impl Arbiter for Fcfs {
    #[inline]
    fn pick(&mut self, h: &QueueHeads, gc: GcMode) -> Option<Class> {
        if gc == GcMode::Blocking && h.gc.is_some() {
            return Some(Class::Gc);
        }
        [(h.read, Class::Read), (h.write, Class::Write), (h.gc, Class::Gc)]
            .into_iter()
            .filter_map(|(s, c)| s.map(|s| (s, c)))
            .min_by_key(|&(s, _)| s)
            .map(|(_, c)| c)
    }
}

/// Arbiter names accepted in config (`sched.arbiter`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArbiterKind {
    /// [`ReadFirst`] (FR-FCFS read priority).
    #[default]
    ReadFirst,
    /// [`Fcfs`].
    Fcfs,
}

impl ArbiterKind {
    /// Every arbiter, in documentation order.
    pub const ALL: [ArbiterKind; 2] = [ArbiterKind::ReadFirst, ArbiterKind::Fcfs];

    /// The config name (`sched.arbiter`).
    pub fn name(self) -> &'static str {
        match self {
            ArbiterKind::ReadFirst => "read-first",
            ArbiterKind::Fcfs => "fcfs",
        }
    }

    /// One line on what the arbiter does (for `lamina policies`).
    pub fn describe(self) -> &'static str {
        match self {
            ArbiterKind::ReadFirst => "reads before writes, FCFS within a class",
            ArbiterKind::Fcfs => "the oldest queue head first, whatever its class",
        }
    }

    /// Where the arbiter comes from.
    pub fn source(self) -> &'static str {
        match self {
            ArbiterKind::ReadFirst => {
                "FR-FCFS read priority (Rixner et al., ISCA 2000), as in SSDsim and MQSim"
            }
            ArbiterKind::Fcfs => "plain first-come first-served (the textbook baseline)",
        }
    }

    /// Build the arbiter.
    pub fn build(self) -> Box<dyn Arbiter> {
        match self {
            ArbiterKind::ReadFirst => Box::new(ReadFirst),
            ArbiterKind::Fcfs => Box::new(Fcfs),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_first_prefers_reads_unless_gc_blocks() {
        let h = QueueHeads { read: Some(5), write: Some(1), gc: Some(3) };
        assert_eq!(ReadFirst.pick(&h, GcMode::Blocking), Some(Class::Gc));
        assert_eq!(ReadFirst.pick(&h, GcMode::Preemptible), Some(Class::Read));
        let h = QueueHeads { read: None, write: Some(1), gc: Some(3) };
        assert_eq!(ReadFirst.pick(&h, GcMode::Preemptible), Some(Class::Gc));
        let h = QueueHeads { read: None, write: Some(1), gc: None };
        assert_eq!(ReadFirst.pick(&h, GcMode::Preemptible), Some(Class::Write));
        assert_eq!(ReadFirst.pick(&QueueHeads::default(), GcMode::Blocking), None);
    }

    /// `lamina policies` prints `name()`: it must be the name the config accepts.
    #[test]
    fn listed_names_are_the_config_names() {
        use serde::de::value::{Error, StrDeserializer};
        fn parse<'de, T: Deserialize<'de>>(name: &'de str) -> T {
            T::deserialize(StrDeserializer::<Error>::new(name)).expect(name)
        }
        for a in ArbiterKind::ALL {
            assert_eq!(parse::<ArbiterKind>(a.name()), a);
        }
        for g in GcMode::ALL {
            assert_eq!(parse::<GcMode>(g.name()), g);
        }
        for p in PlacementKind::ALL {
            assert_eq!(parse::<PlacementKind>(p.name()), p);
            assert!(!p.describe().is_empty() && !p.source().is_empty());
        }
        for s in SchedulerKind::ALL {
            assert_eq!(parse::<SchedulerKind>(s.name()), s);
            assert!(!s.describe().is_empty() && !s.source().is_empty());
        }
    }

    #[test]
    fn fcfs_serves_oldest() {
        let h = QueueHeads { read: Some(5), write: Some(1), gc: Some(3) };
        assert_eq!(Fcfs.pick(&h, GcMode::Preemptible), Some(Class::Write));
        assert_eq!(Fcfs.pick(&h, GcMode::Blocking), Some(Class::Gc));
    }
}
