//! Transaction schedulers (`sched.scheduler`) on hand-built queues and device states
//! ([`MockView`]): each scheduler's decision checked against its rule in
//! `docs/policies.md` — `fcfs` serves the arbiter's queue head; `multiplane` joins only
//! what the device's multi-plane rules allow; `soml` refuses each violation of the SOML
//! rules (one test per rule) and the device agrees; `sprinkler` serves the most
//! connected request, the oldest on a tie, and its starvation guard serves a head passed
//! over `window` times. A property test issues every multi-plane or SOML command built
//! from a decision to a real `Device` whose pages are programmed to match the view: the
//! device must accept each one.

use lamina_nand_model::{
    Command, Device, DeviceOptions, DeviceSpec, Lpn, PageAddr, PlaneId, Ppa, SimTime, SomlConfig, SomlPart,
    preset,
};
use lamina_sched::mock::MockView;
use lamina_sched::{
    ArbiterKind, Choice, Class, Decision, DeviceView, DieQueues, GcJobRef, GcMode, NO_REQUEST, QueuedTxn,
    RsCounters, SchedulerKind, SchedulerParams, Slot, TxnKind, TxnScheduler,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;

const PAGE: u32 = 16384;

/// A small device: one channel, one chip of two dies with `planes` planes each, 32
/// blocks of 48 TLC pages of `page` bytes; SOML `(granularity, max_parts, decoders)`.
fn spec_with(planes: u32, page: u32, soml: Option<(u32, u32, u32)>) -> DeviceSpec {
    let mut c = preset("soml-tlc64").expect("preset");
    let g = &mut c.geometry;
    (g.channels, g.chips_per_channel, g.dies_per_chip, g.planes_per_die) = (1, 1, 2, planes);
    (g.blocks_per_plane, g.pages_per_block, g.layers, g.page_size_bytes) = (32, 48, 16, page);
    g.partial_read_bytes = soml.map(|s| s.0);
    c.soml = soml.map(|(_, max_parts, decoders)| SomlConfig {
        max_parts,
        decoders: Some(decoders),
        factor: Some(1.063),
        t_r: None,
    });
    c.validate().expect("valid test device")
}

fn spec(planes: u32) -> DeviceSpec {
    spec_with(planes, PAGE, Some((4096, 4, 4)))
}

/// Queues of die 0 and the view they are scheduled against.
struct Bench {
    spec: DeviceSpec,
    view: MockView,
    q: DieQueues,
    seq: u64,
}

impl Bench {
    fn new(spec: DeviceSpec) -> Bench {
        Bench { view: MockView::new(&spec), spec, q: DieQueues::default(), seq: 0 }
    }

    /// Plane `i` of die `die`.
    fn plane(&self, die: u32, i: u32) -> PlaneId {
        PlaneId(die * self.view.geometry().planes_per_die() + i)
    }

    fn txn(&mut self, kind: TxnKind, lpn: u64, req: u32, plane: PlaneId, offset: u32, len: u32) -> QueuedTxn {
        self.seq += 1;
        QueuedTxn { id: self.seq as u32, kind, req, lpn: Lpn(lpn), plane, offset, len, seq: self.seq }
    }

    /// Queue a read of bytes `offset..offset + len` of `lpn`, mapped to page `page` of
    /// block `block` of plane `plane` of die 0.
    #[allow(clippy::too_many_arguments)]
    fn read(&mut self, lpn: u64, req: u32, plane: u32, block: u32, page: u32, offset: u32, len: u32) {
        self.read_on(TxnKind::Read, 0, lpn, req, plane, block, page, offset, len);
    }

    /// Queue a whole-page read (see [`Bench::read`]).
    fn page_read(&mut self, lpn: u64, req: u32, plane: u32, block: u32, page: u32) {
        let size = self.view.geometry().page_size_bytes();
        self.read(lpn, req, plane, block, page, 0, size);
    }

    #[allow(clippy::too_many_arguments)]
    fn read_on(
        &mut self,
        kind: TxnKind,
        die: u32,
        lpn: u64,
        req: u32,
        plane: u32,
        block: u32,
        page: u32,
        offset: u32,
        len: u32,
    ) {
        let p = self.plane(die, plane);
        self.view.map_lpn(Lpn(lpn), p, block, page);
        let t = self.txn(kind, lpn, req, p, offset, len);
        self.q.reads.push_back(t);
    }

    /// Queue a host write (or, with `req == NO_REQUEST`, a flush) of `lpn` to plane
    /// `plane` of die 0.
    fn write(&mut self, lpn: u64, req: u32, plane: u32) {
        let kind = if req == NO_REQUEST { TxnKind::Flush } else { TxnKind::Write };
        let (p, size) = (self.plane(0, plane), self.view.geometry().page_size_bytes());
        let t = self.txn(kind, lpn, req, p, 0, size);
        self.q.writes.push_back(t);
    }

    fn gc(&mut self, plane: u32) {
        self.seq += 1;
        let plane = self.plane(0, plane);
        self.q.gc.push_back(GcJobRef { plane, seq: self.seq });
    }

    fn next_write(&mut self, plane: u32, block: u32, page: u32) {
        let p = self.plane(0, plane);
        self.view.set_next_write(p, block, page);
    }

    fn decide(&self, s: &mut dyn TxnScheduler, slot: Slot) -> Decision {
        let mut d = Decision::default();
        s.schedule(&slot, &self.q, &self.view, &mut d);
        d
    }

    /// A device whose pages are programmed as the view says: every mapped page readable.
    fn device(&self) -> Device {
        let mut dev = Device::new(self.spec.clone(), DeviceOptions::default());
        let g = self.view.geometry().clone();
        for &ppa in self.view.mapping.values() {
            let first = g.first_page(g.block_of(ppa)).0;
            while let Some(next) = dev.write_pointer(g.block_of(ppa)) {
                if first + next as u64 > ppa.0 {
                    break;
                }
                dev.program_untimed(Ppa(first + next as u64), 0).expect("in-order program");
            }
        }
        dev
    }

    /// Does the device accept the SOML read of the queued reads at `picks`?
    fn device_takes_soml(&self, picks: &[u32]) -> bool {
        let parts: Vec<SomlPart> =
            picks.iter().map(|&i| soml_part(&self.view, &self.q.reads[i as usize])).collect();
        self.device().issue(SimTime::ZERO, &Command::SomlRead { parts: &parts }).is_ok()
    }
}

fn soml_part(view: &MockView, t: &QueuedTxn) -> SomlPart {
    let ppa = view.lookup(t.lpn).expect("mapped");
    SomlPart { page: view.geometry().addr(ppa), offset_bytes: t.offset, len_bytes: t.len }
}

fn build(
    kind: SchedulerKind,
    spec: &DeviceSpec,
    arbiter: ArbiterKind,
    gc: GcMode,
    width: u32,
    window: u32,
) -> Box<dyn TxnScheduler> {
    kind.build(SchedulerParams { arbiter, gc, width, window, soml: spec.soml() })
}

fn sched(kind: SchedulerKind, b: &Bench) -> Box<dyn TxnScheduler> {
    let width = b.view.geometry().planes_per_die();
    build(kind, &b.spec, ArbiterKind::ReadFirst, GcMode::Blocking, width, 32)
}

fn free() -> Slot {
    Slot { die: lamina_nand_model::DieId(0), suspend: false, writes_blocked: false }
}

fn decision(choice: Choice, picks: &[u32]) -> Decision {
    Decision { choice, picks: picks.to_vec() }
}

/// Four planes whose next writes all sit at block 5, page 7, and the writes `(lpn,
/// req, plane)` queued in order.
fn aligned_writes(writes: &[(u64, u32, u32)]) -> Bench {
    let mut b = Bench::new(spec(4));
    for p in 0..4 {
        b.next_write(p, 5, 7);
    }
    for &(lpn, req, plane) in writes {
        b.write(lpn, req, plane);
    }
    b
}

// -------------------------------------------------------------------- mbm (RS)

/// mbm-ftl Fig. 6a: the head's request has reads on sibling planes at its block and
/// page: RS forms the multi-plane read of that request's reads only; `multiplane` would
/// also take request 2's read on plane 2.
#[test]
fn mbm_forms_a_multi_plane_read_only_of_one_requests_reads() {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 3, 5); // 0: anchor, request 1
    b.page_read(1, 2, 2, 3, 5); // 1: request 2, joinable by address
    b.page_read(2, 1, 1, 3, 5); // 2: request 1, joins
    b.page_read(3, 1, 3, 4, 5); // 3: request 1, other block index
    let mut rs = sched(SchedulerKind::Mbm, &b);
    assert_eq!(b.decide(rs.as_mut(), free()), decision(Choice::Read, &[0, 2]));
    let mp = b.decide(sched(SchedulerKind::Multiplane, &b).as_mut(), free());
    assert_eq!(mp, decision(Choice::Read, &[0, 1, 2]));
    let c = rs.rs_counters().expect("mbm counts");
    assert_eq!(c, RsCounters { decisions: 1, multi_plane: 1, refused: 1, refused_reads: 1 });
    assert_eq!(sched(SchedulerKind::Multiplane, &b).rs_counters(), None);
}

/// mbm-ftl Fig. 6b: the head's multi-plane partners all belong to other requests: RS
/// serves the first-arrived read alone.
#[test]
fn mbm_serves_the_first_read_alone_when_its_partners_are_other_requests() {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 3, 5); // 0: anchor, request 1
    b.page_read(1, 2, 1, 3, 5); // 1: request 2
    b.page_read(2, 3, 2, 3, 5); // 2: request 3
    let mut rs = sched(SchedulerKind::Mbm, &b);
    assert_eq!(b.decide(rs.as_mut(), free()), decision(Choice::Read, &[0]));
    assert_eq!(
        b.decide(sched(SchedulerKind::Multiplane, &b).as_mut(), free()),
        decision(Choice::Read, &[0, 1, 2])
    );
    assert_eq!(
        rs.rs_counters(),
        Some(RsCounters { decisions: 1, multi_plane: 0, refused: 1, refused_reads: 2 })
    );
    // Once the head is served, request 2's read heads the queue and request 3's is
    // still another request's: alone again.
    b.q.reads.pop_front();
    assert_eq!(b.decide(rs.as_mut(), free()), decision(Choice::Read, &[0]));
    // A lone request with nothing to join: neither formed nor refused.
    b.q.reads.pop_back();
    assert_eq!(b.decide(rs.as_mut(), free()), decision(Choice::Read, &[0]));
    assert_eq!(
        rs.rs_counters(),
        Some(RsCounters { decisions: 3, multi_plane: 0, refused: 2, refused_reads: 3 })
    );
}

/// A read of no host request (a read-modify-write read of an undecided write) joins
/// nothing, even another such read: they are not one request.
#[test]
fn mbm_serves_a_read_of_no_request_alone() {
    let mut b = Bench::new(spec(2));
    b.read_on(TxnKind::RmwRead, 0, 0, NO_REQUEST, 0, 3, 5, 0, PAGE);
    b.read_on(TxnKind::RmwRead, 0, 1, NO_REQUEST, 1, 3, 5, 0, PAGE);
    assert_eq!(b.decide(sched(SchedulerKind::Mbm, &b).as_mut(), free()), decision(Choice::Read, &[0]));
    assert_eq!(
        b.decide(sched(SchedulerKind::Multiplane, &b).as_mut(), free()),
        decision(Choice::Read, &[0, 1])
    );
}

/// Writes and GC: exactly `multiplane`'s decisions (WS's multi-plane programs).
#[test]
fn mbm_writes_and_gc_are_multiplane() {
    // Request 2's write joins (writes are parallelism-enhanced); the third finds plane 1
    // taken.
    let mut b = aligned_writes(&[(10, 1, 0), (11, 2, 1), (12, 1, 1), (13, 3, 3)]);
    let (mut rs, mut mp) = (sched(SchedulerKind::Mbm, &b), sched(SchedulerKind::Multiplane, &b));
    assert_eq!(b.decide(rs.as_mut(), free()), decision(Choice::Write, &[0, 1, 3]));
    assert_eq!(b.decide(rs.as_mut(), free()), b.decide(mp.as_mut(), free()));
    b.gc(0);
    b.gc(2);
    assert_eq!(b.decide(rs.as_mut(), free()), decision(Choice::Gc, &[0, 1]));
    assert_eq!(rs.rs_counters(), Some(RsCounters::default()), "no read decided");
}

// ------------------------------------------------------------------------- fcfs

/// A read, a write, a GC job and, per case, what the arbiter serves.
#[test]
fn fcfs_serves_the_head_of_the_queue_the_arbiter_picks() {
    let mut b = Bench::new(spec(4));
    b.write(100, 1, 0); // oldest
    b.page_read(1, 2, 0, 3, 5);
    b.page_read(2, 3, 1, 3, 5); // a multi-plane partner fcfs never takes
    b.write(101, 4, 1);
    let spec = b.spec.clone();
    let fcfs = |a, g| build(SchedulerKind::Fcfs, &spec, a, g, 4, 32);
    let (rf, ff) = (ArbiterKind::ReadFirst, ArbiterKind::Fcfs);
    let (blocking, preempt) = (GcMode::Blocking, GcMode::Preemptible);
    assert_eq!(b.decide(fcfs(rf, blocking).as_mut(), free()), decision(Choice::Read, &[0]));
    assert_eq!(b.decide(fcfs(ff, blocking).as_mut(), free()), decision(Choice::Write, &[0]));
    b.gc(2);
    // Blocking GC goes first whatever the arbiter.
    assert_eq!(b.decide(fcfs(rf, blocking).as_mut(), free()), decision(Choice::Gc, &[0]));
    assert_eq!(b.decide(fcfs(ff, blocking).as_mut(), free()), decision(Choice::Gc, &[0]));
    // Preemptible: read-first serves the read; fcfs the oldest head (the write).
    assert_eq!(b.decide(fcfs(rf, preempt).as_mut(), free()), decision(Choice::Read, &[0]));
    assert_eq!(b.decide(fcfs(ff, preempt).as_mut(), free()), decision(Choice::Write, &[0]));
    b.q.reads.clear();
    // Preemptible, no reads: read-first runs GC before host writes.
    assert_eq!(b.decide(fcfs(rf, preempt).as_mut(), free()), decision(Choice::Gc, &[0]));
}

#[test]
fn fcfs_suspend_slot_serves_only_reads() {
    let mut b = Bench::new(spec(2));
    b.write(100, 1, 0);
    b.gc(1);
    let suspend = Slot { suspend: true, ..free() };
    let mut s = sched(SchedulerKind::Fcfs, &b);
    assert_eq!(b.decide(s.as_mut(), suspend), Decision::default(), "no read: nothing may suspend");
    b.page_read(1, 2, 0, 0, 0);
    assert_eq!(b.decide(s.as_mut(), suspend), decision(Choice::Read, &[0]));
    // The same queues on a free die: blocking GC first.
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Gc, &[0]));
}

#[test]
fn fcfs_blocked_writes_wait() {
    let mut b = Bench::new(spec(2));
    b.write(100, 1, 0);
    let blocked = Slot { writes_blocked: true, ..free() };
    let mut s = build(SchedulerKind::Fcfs, &b.spec, ArbiterKind::Fcfs, GcMode::Preemptible, 2, 32);
    assert_eq!(b.decide(s.as_mut(), blocked), Decision::default());
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0]));
    b.gc(0);
    assert_eq!(b.decide(s.as_mut(), blocked), decision(Choice::Gc, &[0]));
}

// ------------------------------------------------------------------- multiplane

/// The anchor at plane 0, block 3, page 5 and one candidate per way of failing.
fn multiplane_reads() -> Bench {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 3, 5); // 0: anchor
    b.page_read(1, 2, 0, 4, 5); // 1: same plane
    b.page_read(2, 3, 1, 3, 5); // 2: joins
    b.page_read(3, 4, 2, 4, 5); // 3: other block index
    b.page_read(4, 5, 3, 3, 6); // 4: other page
    b.read_on(TxnKind::Read, 1, 5, 6, 2, 3, 5, 0, PAGE); // 5: the page is on die 1 now
    b.page_read(6, 7, 1, 3, 5); // 6: plane 1 is taken
    let unmapped = b.txn(TxnKind::Read, 999, 8, b.plane(0, 3), 0, PAGE);
    b.q.reads.push_back(unmapped); // 7: a read of an unmapped page
    b.page_read(8, 9, 3, 3, 5); // 8: joins
    b
}

#[test]
fn multiplane_reads_join_sibling_planes_at_the_anchor_address() {
    let b = multiplane_reads();
    let mut s = sched(SchedulerKind::Multiplane, &b);
    let d = b.decide(s.as_mut(), free());
    assert_eq!(d, decision(Choice::Read, &[0, 2, 8]));
    let pages: Vec<PageAddr> =
        d.picks.iter().map(|&i| soml_part(&b.view, &b.q.reads[i as usize]).page).collect();
    let cmd = Command::Read { pages: &pages, offset_bytes: 0, len_bytes: PAGE };
    b.device().issue(SimTime::ZERO, &cmd).expect("the device takes the multi-plane read");
    // fcfs: the head alone.
    assert_eq!(b.decide(sched(SchedulerKind::Fcfs, &b).as_mut(), free()), decision(Choice::Read, &[0]));
}

#[test]
fn multiplane_reads_respect_width_and_window() {
    let b = multiplane_reads();
    let mp = |width, window| {
        build(SchedulerKind::Multiplane, &b.spec, ArbiterKind::ReadFirst, GcMode::Blocking, width, window)
    };
    assert_eq!(b.decide(mp(2, 32).as_mut(), free()), decision(Choice::Read, &[0, 2]));
    assert_eq!(b.decide(mp(1, 32).as_mut(), free()), decision(Choice::Read, &[0]));
    assert_eq!(b.decide(mp(0, 32).as_mut(), free()), decision(Choice::Read, &[0]));
    // The window counts entries beyond the head: position 8 needs a window of 8.
    assert_eq!(b.decide(mp(4, 7).as_mut(), free()), decision(Choice::Read, &[0, 2]));
    assert_eq!(b.decide(mp(4, 8).as_mut(), free()), decision(Choice::Read, &[0, 2, 8]));
    assert_eq!(b.decide(mp(4, 1).as_mut(), free()), decision(Choice::Read, &[0]));
}

#[test]
fn multiplane_writes_join_when_next_write_addresses_match() {
    let mut b = Bench::new(spec(4));
    b.next_write(0, 5, 7);
    b.next_write(1, 5, 7);
    b.next_write(2, 6, 7); // other block
    b.next_write(3, 5, 8); // other page
    b.write(10, 1, 0); // anchor
    b.write(11, 2, 0); // same plane
    b.write(12, 3, 2);
    b.write(13, 4, 3);
    b.write(14, 5, 1); // joins
    let mut s = sched(SchedulerKind::Multiplane, &b);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0, 4]));
    b.next_write(2, 5, 7);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0, 2, 4]));
    // A plane whose next address is unknown never joins; nor does anything join an
    // anchor whose address is unknown.
    let (p0, p1) = (b.plane(0, 0), b.plane(0, 1));
    b.view.next_block[p1.idx()] = None;
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0, 2]));
    b.view.next_block[p0.idx()] = None;
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0]));
}

/// A page's newer write never goes with (or before) its older one: the older data
/// would stay mapped.
#[test]
fn a_newer_write_of_a_page_never_joins() {
    // The second write is the same page, newer.
    let b = aligned_writes(&[(10, 1, 0), (10, 2, 1), (11, 3, 1)]);
    let mut s = sched(SchedulerKind::Multiplane, &b);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0, 2]));
}

#[test]
fn ftl_picked_planes_take_up_to_the_row_room() {
    let mut b = Bench::new(spec(4));
    for lpn in 0..6 {
        b.write(lpn, lpn as u32, 0); // all queued on plane 0: the FTL picks the plane
    }
    let mut s = sched(SchedulerKind::Multiplane, &b);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0]), "not aligned: plane 0 only");
    b.view.aligned_rows[0] = Some(3);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0, 1, 2]));
    b.view.aligned_rows[0] = Some(9);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0, 1, 2, 3]), "at most the width");
    b.view.aligned_rows[0] = Some(0);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0]));
    b.view.aligned_rows[0] = Some(4);
    b.q.writes[2].lpn = Lpn(0); // a newer write of the head's page
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Write, &[0, 1, 3, 4]));
}

#[test]
fn gc_takes_up_to_width_jobs() {
    let mut b = Bench::new(spec(4));
    for p in [2, 0, 3] {
        b.gc(p);
    }
    let gc = |kind, width| build(kind, &b.spec, ArbiterKind::ReadFirst, GcMode::Blocking, width, 32);
    for kind in [SchedulerKind::Multiplane, SchedulerKind::Soml, SchedulerKind::Sprinkler] {
        assert_eq!(b.decide(gc(kind, 2).as_mut(), free()), decision(Choice::Gc, &[0, 1]));
        assert_eq!(b.decide(gc(kind, 4).as_mut(), free()), decision(Choice::Gc, &[0, 1, 2]));
    }
    assert_eq!(b.decide(gc(SchedulerKind::Fcfs, 4).as_mut(), free()), decision(Choice::Gc, &[0]));
}

// ------------------------------------------------------------------------- soml

/// The anchor: a quarter-page read (slot 0) of plane 0, block 0, page 3.
fn soml_bench() -> Bench {
    let mut b = Bench::new(spec(2));
    b.read(0, 1, 0, 0, 3, 0, 4096);
    b
}

/// Schedule with `soml` and check the device agrees: a SOML decision is accepted, and
/// the SOML read of the anchor with a refused candidate (position 1) is rejected.
fn soml_decide(b: &Bench) -> Decision {
    let d = b.decide(sched(SchedulerKind::Soml, b).as_mut(), free());
    if d.choice == Choice::SomlRead {
        assert!(b.device_takes_soml(&d.picks), "device refused {d:?}");
    }
    d
}

#[test]
fn soml_coalesces_partial_reads_of_one_plane() {
    let mut b = soml_bench();
    b.read(1, 2, 0, 1, 9, 4096, 4096); // slot 1
    b.read(2, 3, 0, 2, 0, 8192, 4096); // slot 2
    b.read(3, 4, 0, 3, 47, 12288, 100); // slot 3 (a few bytes of it)
    assert_eq!(soml_decide(&b), decision(Choice::SomlRead, &[0, 1, 2, 3]));
    // multiplane never forms SOML reads.
    assert_eq!(b.decide(sched(SchedulerKind::Multiplane, &b).as_mut(), free()), decision(Choice::Read, &[0]));
}

/// The anchor alone is served, and the device rejects the SOML read the candidate at
/// position 1 would have formed with it.
fn assert_refused(b: &Bench) {
    assert_eq!(soml_decide(b), decision(Choice::Read, &[0]));
    assert!(!b.device_takes_soml(&[0, 1]));
}

// Each rule: the anchor plus one candidate that breaks it.

#[test]
fn soml_refuses_another_plane() {
    let mut b = soml_bench();
    b.read(1, 2, 1, 1, 9, 4096, 4096);
    assert_refused(&b);
}

#[test]
fn soml_refuses_the_same_block() {
    let mut b = soml_bench();
    b.read(1, 2, 0, 0, 9, 4096, 4096);
    assert_refused(&b);
}

#[test]
fn soml_refuses_a_shared_block_decoder() {
    let mut b = soml_bench();
    b.read(1, 2, 0, 4, 9, 4096, 4096); // 4 % 4 decoders = block 0's decoder
    assert_refused(&b);
    b.read(2, 3, 0, 5, 9, 4096, 4096); // decoder 1: joins
    assert_eq!(soml_decide(&b), decision(Choice::SomlRead, &[0, 2]));
}

#[test]
fn soml_refuses_shared_bit_lines() {
    let mut b = Bench::new(spec(2));
    // Disjoint bytes, but both in slot 0 (4 KiB granularity): they share bit-lines.
    b.read(0, 1, 0, 0, 3, 1000, 100);
    b.read(1, 2, 0, 1, 9, 3000, 2000); // slots 0..1
    assert_refused(&b);
    b.read(2, 3, 0, 2, 9, 4096, 8192); // slots 1..2
    assert_eq!(soml_decide(&b), decision(Choice::SomlRead, &[0, 2]));
}

#[test]
fn soml_takes_only_partial_host_reads() {
    let mut b = soml_bench();
    b.page_read(1, 2, 0, 1, 9); // a whole page: every bit-line
    b.read_on(TxnKind::RmwRead, 0, 2, 3, 0, 2, 9, 4096, 4096);
    assert_refused(&b);
    // A whole-page anchor forms no SOML read.
    let mut b = Bench::new(spec(2));
    b.page_read(0, 1, 0, 0, 3);
    b.read(1, 2, 0, 1, 9, 4096, 4096);
    assert_eq!(soml_decide(&b), decision(Choice::Read, &[0]));
}

#[test]
fn soml_stops_at_max_parts_and_the_window() {
    let mut b = Bench::new(spec_with(2, PAGE, Some((4096, 2, 4))));
    b.read(0, 1, 0, 0, 3, 0, 4096);
    b.read(1, 2, 0, 1, 9, 4096, 4096);
    b.read(2, 3, 0, 2, 9, 8192, 4096);
    assert_eq!(soml_decide(&b), decision(Choice::SomlRead, &[0, 1]));
    assert!(!b.device_takes_soml(&[0, 1, 2]), "the device takes at most max_parts");
    let b = {
        let mut b = soml_bench();
        b.read(1, 2, 0, 1, 9, 4096, 4096);
        b
    };
    let mut s = build(SchedulerKind::Soml, &b.spec, ArbiterKind::ReadFirst, GcMode::Blocking, 2, 0);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Read, &[0]), "window 0: the head alone");
}

#[test]
fn soml_prefers_a_multi_plane_partner() {
    let mut b = soml_bench();
    b.read(1, 2, 0, 1, 9, 4096, 4096); // a SOML partner
    b.read(2, 3, 1, 0, 3, 8192, 4096); // plane 1, block 0, page 3: multi-plane partner
    assert_eq!(soml_decide(&b), decision(Choice::Read, &[0, 2]));
}

/// soml.max_parts may be any value up to the slots per page (32 here): all 24 parts.
#[test]
fn soml_takes_more_than_sixteen_parts() {
    let mut b = Bench::new(spec_with(2, PAGE, Some((512, 24, 24))));
    for i in 0..30 {
        b.read(i as u64, i, 0, i, 1, 512 * i, 512);
    }
    let d = soml_decide(&b);
    assert_eq!(d, decision(Choice::SomlRead, &(0..24).collect::<Vec<_>>()));
}

/// With more than 64 slots per page the device folds slots ≥ 64 onto one bit; the
/// scheduler must refuse what the device refuses.
#[test]
fn soml_slots_beyond_sixty_four_fold_as_in_the_device() {
    let mut b = Bench::new(spec_with(2, 65536, Some((512, 8, 8))));
    b.read(0, 1, 0, 0, 3, 70 * 512, 512);
    b.read(1, 2, 0, 1, 3, 80 * 512, 512);
    assert!(!b.device_takes_soml(&[0, 1]));
    assert_eq!(soml_decide(&b), decision(Choice::Read, &[0]));
    b.read(2, 3, 0, 2, 3, 10 * 512, 512);
    assert_eq!(soml_decide(&b), decision(Choice::SomlRead, &[0, 2]));
}

// -------------------------------------------------------------------- sprinkler

#[test]
fn sprinkler_serves_the_most_connected_request_and_fills_the_command() {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 1, 1); // 0: request 1, alone
    b.page_read(1, 2, 0, 2, 2); // 1..3: request 2 on planes 0, 1, 2
    b.page_read(2, 2, 1, 2, 2);
    b.page_read(3, 2, 2, 2, 2);
    b.page_read(4, 3, 3, 2, 2); // 4: request 3 fills plane 3
    assert_eq!(
        b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()),
        decision(Choice::Read, &[1, 2, 3, 4])
    );
    assert_eq!(b.decide(sched(SchedulerKind::Multiplane, &b).as_mut(), free()), decision(Choice::Read, &[0]));
}

#[test]
fn sprinkler_breaks_ties_by_age() {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 1, 1); // request 1: alone
    b.page_read(1, 2, 0, 2, 2); // request 2: 2 planes
    b.page_read(2, 3, 0, 3, 3); // request 3: 2 planes, younger
    b.page_read(3, 3, 1, 3, 3);
    b.page_read(4, 2, 1, 2, 2);
    assert_eq!(
        b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()),
        decision(Choice::Read, &[1, 4])
    );
    // All equal: FCFS.
    let mut b = Bench::new(spec(4));
    for i in 0..3 {
        b.page_read(i, i as u32, 0, i as u32, 1);
    }
    assert_eq!(b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()), decision(Choice::Read, &[0]));
}

/// A request's connectivity is the widest command any of its transactions anchors, not
/// only its oldest one.
#[test]
fn sprinkler_measures_a_request_over_all_its_transactions() {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 1, 1); // request 1's oldest: alone
    b.page_read(1, 2, 0, 2, 2); // request 2: 2 planes
    b.page_read(2, 2, 1, 2, 2);
    b.page_read(3, 1, 0, 3, 3); // request 1: 3 planes at block 3, page 3
    b.page_read(4, 1, 1, 3, 3);
    b.page_read(5, 1, 2, 3, 3);
    assert_eq!(
        b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()),
        decision(Choice::Read, &[3, 4, 5])
    );
}

/// The chosen request's transactions go first; others only fill planes it leaves free.
#[test]
fn sprinkler_fills_with_other_requests_after_its_own() {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 1, 1);
    b.page_read(1, 3, 1, 2, 2); // request 3 on plane 1: would take request 2's plane
    b.page_read(2, 2, 0, 2, 2); // request 2: planes 0, 1, 2
    b.page_read(3, 2, 1, 2, 2);
    b.page_read(4, 2, 2, 2, 2);
    b.page_read(5, 4, 3, 2, 2); // request 4 fills plane 3
    assert_eq!(
        b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()),
        decision(Choice::Read, &[2, 3, 4, 5])
    );
}

/// Buffer flushes (no request) count as one request.
#[test]
fn sprinkler_groups_flushes_as_one_request() {
    let mut b = Bench::new(spec(4));
    for p in 0..4 {
        b.next_write(p, 5, 7);
    }
    b.write(10, 1, 0); // request 1: one plane
    b.write(11, NO_REQUEST, 0);
    b.write(12, NO_REQUEST, 1);
    b.write(13, NO_REQUEST, 2);
    b.write(14, 2, 3); // request 2 fills plane 3
    assert_eq!(
        b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()),
        decision(Choice::Write, &[1, 2, 3, 4])
    );
}

/// Out of order, a page's newer write still never goes first.
#[test]
fn sprinkler_keeps_writes_of_one_page_in_order() {
    let mut b = Bench::new(spec(4));
    b.next_write(0, 4, 7);
    for p in 1..4 {
        b.next_write(p, 5, 7);
    }
    b.write(10, 1, 0); // request 1: alone
    b.write(10, 2, 1); // request 2: page 10 again, with plane 2 it would span 2 planes
    b.write(11, 2, 2);
    b.write(12, 3, 3);
    // Request 2 cannot anchor at position 1 (an older write of page 10 waits) and from
    // position 2 has no partner of its own: every request has connectivity 1, so the
    // head goes, alone at block 4.
    assert_eq!(b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()), decision(Choice::Write, &[0]));
    b.next_write(0, 5, 7);
    // Now the head joins planes 2 and 3 but never its page's newer write.
    assert_eq!(
        b.decide(sched(SchedulerKind::Sprinkler, &b).as_mut(), free()),
        decision(Choice::Write, &[0, 2, 3])
    );
}

#[test]
fn sprinkler_starvation_guard_serves_a_head_passed_over_window_times() {
    let mut b = Bench::new(spec(4));
    b.page_read(0, 1, 0, 1, 1); // the head, alone
    b.page_read(1, 2, 0, 2, 2); // request 2: 2 planes
    b.page_read(2, 2, 1, 2, 2);
    let mut s = build(SchedulerKind::Sprinkler, &b.spec, ArbiterKind::ReadFirst, GcMode::Blocking, 4, 2);
    for pass in 1..=2 {
        assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Read, &[1, 2]), "pass {pass}");
    }
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Read, &[0]), "passed over twice: served");
    // A new head starts a new count.
    b.q.reads.pop_front();
    b.page_read(3, 3, 3, 9, 9);
    assert_eq!(b.decide(s.as_mut(), free()), decision(Choice::Read, &[0, 1]));
}

#[test]
fn sprinkler_counts_pass_overs_per_die() {
    let mut b = [Bench::new(spec(4)), Bench::new(spec(4))];
    for (die, b) in b.iter_mut().enumerate() {
        b.read_on(TxnKind::Read, die as u32, 0, 1, 0, 1, 1, 0, PAGE);
        b.read_on(TxnKind::Read, die as u32, 1, 2, 0, 2, 2, 0, PAGE);
        b.read_on(TxnKind::Read, die as u32, 2, 2, 1, 2, 2, 0, PAGE);
    }
    let mut s = build(SchedulerKind::Sprinkler, &b[0].spec, ArbiterKind::ReadFirst, GcMode::Blocking, 4, 2);
    let slot = |die| Slot { die: lamina_nand_model::DieId(die), ..free() };
    for expected in [&[1, 2][..], &[1, 2], &[0]] {
        for (die, b) in b.iter().enumerate() {
            assert_eq!(b.decide(s.as_mut(), slot(die as u32)), decision(Choice::Read, expected));
        }
    }
}

// ------------------------------------------------------------- property test

/// A random die-0 state: reads of mapped (possibly moved or unmapped) pages, writes
/// with predicted next addresses, GC jobs.
#[derive(Clone, Debug)]
struct Case {
    planes: u32,
    decoders: u32,
    max_parts: u32,
    /// Per LPN 0..24: (die, plane, block, page), `None` = unmapped.
    map: Vec<Option<(u32, u32, u32, u32)>>,
    /// (lpn, req, rmw, offset seed, len seed, shape: 0 whole page, 1 one 4 KiB slot,
    /// 2 any byte range).
    reads: Vec<(u64, u32, bool, u32, u32, u8)>,
    /// (lpn, req or NO_REQUEST, plane).
    writes: Vec<(u64, u32, u32)>,
    /// Per plane: (block 8.., page) of its next write.
    next: Vec<(u32, u32)>,
    aligned: Option<u32>,
    gc: u32,
    suspend: bool,
    blocked: bool,
    fcfs_arbiter: bool,
    preemptible: bool,
    /// Queue the writes before the reads (older: the fcfs arbiter serves them first).
    writes_first: bool,
    width: u32,
    window: u32,
}

fn case() -> impl Strategy<Value = Case> {
    (prop_oneof![Just(2u32), Just(4u32)], 1u32..=4, 2u32..=4).prop_flat_map(
        |(planes, decoders, max_parts)| {
            let map = prop::collection::vec(
                prop::option::weighted(
                    0.9,
                    (prop_oneof![9 => Just(0u32), 1 => Just(1u32)], 0..planes, 0u32..4, 0u32..3),
                ),
                24,
            );
            let reads = prop::collection::vec(
                (0u64..25, 0u32..4, prop::bool::weighted(0.1), any::<u32>(), any::<u32>(), 0u8..3),
                0..12,
            );
            let reads =
                (reads, prop::bool::weighted(0.3)).prop_map(|(r, none)| if none { Vec::new() } else { r });
            let req = prop_oneof![3 => 0u32..3, 1 => Just(NO_REQUEST)];
            let writes = prop::collection::vec((0u64..8, req, 0..planes), 0..10);
            let next = prop::collection::vec((8u32..10, 0u32..2), planes as usize);
            let gc = prop_oneof![3 => Just(0u32), 1 => 0u32..(1 << planes)];
            let rare = prop::bool::weighted(0.2);
            let flags = (prop::option::weighted(0.3, 0u32..6), gc, any::<[bool; 3]>(), rare, rare);
            (map, reads, writes, next, flags, 0..=planes, 0u32..10).prop_map(
                move |(map, reads, writes, next, (aligned, gc, f, suspend, blocked), width, window)| Case {
                    planes,
                    decoders,
                    max_parts,
                    map,
                    reads,
                    writes,
                    next,
                    aligned,
                    gc,
                    suspend,
                    blocked,
                    fcfs_arbiter: f[0],
                    preemptible: f[1],
                    writes_first: f[2],
                    width,
                    window,
                },
            )
        },
    )
}

impl Case {
    fn bench(&self) -> Bench {
        let mut b = Bench::new(spec_with(self.planes, PAGE, Some((4096, self.max_parts, self.decoders))));
        for (lpn, m) in self.map.iter().enumerate() {
            if let Some((die, plane, block, page)) = *m {
                let p = b.plane(die, plane);
                b.view.map_lpn(Lpn(lpn as u64), p, block, page);
            }
        }
        if self.writes_first {
            self.queue_writes(&mut b);
        }
        for &(lpn, req, rmw, off, len, shape) in &self.reads {
            let (offset, len) = match shape {
                0 => (0, PAGE),
                1 => (off % 4 * 4096, 4096),
                _ => (off % PAGE, 1 + len % (PAGE - off % PAGE)),
            };
            let plane = b.view.lookup(Lpn(lpn)).map_or(PlaneId(0), |ppa| {
                let g = b.view.geometry();
                g.plane_of_block(g.block_of(ppa))
            });
            let kind = if rmw { TxnKind::RmwRead } else { TxnKind::Read };
            let t = b.txn(kind, lpn, req, plane, offset, len);
            b.q.reads.push_back(t);
        }
        if !self.writes_first {
            self.queue_writes(&mut b);
        }
        for (p, &(block, page)) in self.next.iter().enumerate() {
            b.next_write(p as u32, block, page);
        }
        b.view.aligned_rows[0] = self.aligned;
        for p in 0..self.planes {
            if self.gc >> p & 1 == 1 {
                b.gc(p);
            }
        }
        b
    }

    fn queue_writes(&self, b: &mut Bench) {
        for &(lpn, req, plane) in &self.writes {
            b.write(lpn, req, plane);
        }
    }

    fn scheduler(&self, kind: SchedulerKind, b: &Bench) -> Box<dyn TxnScheduler> {
        let arbiter = if self.fcfs_arbiter { ArbiterKind::Fcfs } else { ArbiterKind::ReadFirst };
        let gc = if self.preemptible { GcMode::Preemptible } else { GcMode::Blocking };
        build(kind, &b.spec, arbiter, gc, self.width, self.window)
    }
}

/// The device, with every mapped page and every plane's write pointer as the view says.
fn prepared_device(b: &Bench) -> Device {
    let mut dev = b.device();
    let g = b.view.geometry().clone();
    for p in 0..g.planes_per_die() {
        let (block, page) = b.view.next_write_addr(PlaneId(p)).expect("set");
        for i in 0..page {
            dev.program_untimed(Ppa(g.first_page(block).0 + i as u64), 0).expect("fresh block");
        }
    }
    dev
}

/// Check `d` against the guarantees of `Decision` and issue the command it forms.
fn check(
    kind: SchedulerKind,
    c: &Case,
    b: &Bench,
    slot: &Slot,
    d: &Decision,
    dev: &Device,
) -> Result<(), TestCaseError> {
    let g = b.view.geometry();
    let len = match d.choice {
        Choice::Idle => {
            prop_assert!(d.picks.is_empty());
            return Ok(());
        }
        Choice::Read | Choice::SomlRead => b.q.reads.len(),
        Choice::Write => b.q.writes.len(),
        Choice::Gc => b.q.gc.len(),
    };
    prop_assert!(!d.picks.is_empty());
    let mut seen = d.picks.clone();
    seen.sort_unstable();
    seen.dedup();
    prop_assert_eq!(seen.len(), d.picks.len(), "distinct picks");
    prop_assert!(d.picks.iter().all(|&i| (i as usize) < len), "picks in range");
    if d.choice != Choice::Gc {
        prop_assert!(d.picks.iter().all(|&i| i <= c.window), "picks within the window");
    }
    if kind != SchedulerKind::Sprinkler {
        prop_assert_eq!(d.picks[0], 0, "the anchor is the head");
    }
    if kind == SchedulerKind::Fcfs {
        prop_assert_eq!(d.picks.len(), 1);
    }
    if slot.suspend {
        prop_assert!(
            matches!(d.choice, Choice::Read | Choice::SomlRead),
            "a suspending slot takes reads only"
        );
    }
    if slot.suspend || slot.writes_blocked {
        prop_assert!(d.choice != Choice::Write);
    }
    let n = d.picks.len() as u32;
    let mut dev = dev.clone();
    match d.choice {
        Choice::Idle => unreachable!(),
        Choice::Gc => prop_assert!(n <= c.width.max(1)),
        Choice::Read if n > 1 => {
            prop_assert!(n <= c.width);
            let txns: Vec<&QueuedTxn> = d.picks.iter().map(|&i| &b.q.reads[i as usize]).collect();
            if kind == SchedulerKind::Mbm {
                // RS: a multi-plane read serves one host request.
                prop_assert!(txns[0].req != NO_REQUEST && txns.iter().all(|t| t.req == txns[0].req));
            }
            let pages: Vec<PageAddr> = txns.iter().map(|t| soml_part(&b.view, t).page).collect();
            // Different byte ranges: the command transfers the covering range.
            let lo = txns.iter().map(|t| t.offset).min().expect("picks");
            let hi = txns.iter().map(|t| t.offset + t.len).max().expect("picks");
            let cmd = Command::Read { pages: &pages, offset_bytes: lo, len_bytes: hi - lo };
            prop_assert!(pages.iter().all(|a| g.die_id(*a) == slot.die));
            if let Err(e) = dev.issue(SimTime::ZERO, &cmd) {
                return Err(TestCaseError::fail(format!("device refused multi-plane read {pages:?}: {e}")));
            }
        }
        Choice::Read => {}
        Choice::SomlRead => {
            prop_assert_eq!(kind, SchedulerKind::Soml);
            prop_assert!(n >= 2 && n <= c.max_parts);
            let parts: Vec<SomlPart> =
                d.picks.iter().map(|&i| soml_part(&b.view, &b.q.reads[i as usize])).collect();
            if let Err(e) = dev.issue(SimTime::ZERO, &Command::SomlRead { parts: &parts }) {
                return Err(TestCaseError::fail(format!("device refused SOML read {parts:?}: {e}")));
            }
        }
        Choice::Write => {
            let q = &b.q.writes;
            for &i in &d.picks {
                let lpn = q[i as usize].lpn;
                prop_assert!(
                    q.iter().take(i as usize).all(|t| t.lpn != lpn),
                    "write {} has an older write of its page",
                    i
                );
            }
            if let Some(room) = c.aligned {
                prop_assert!(n <= room.clamp(1, c.width.max(1)));
            } else if n > 1 {
                prop_assert!(n <= c.width);
                let pages: Vec<PageAddr> = d
                    .picks
                    .iter()
                    .map(|&i| {
                        let (block, page) = b.view.next_write_addr(q[i as usize].plane).expect("joined");
                        g.addr(Ppa(g.first_page(block).0 + page as u64))
                    })
                    .collect();
                let tags = vec![0; pages.len()];
                if let Err(e) = dev.issue(SimTime::ZERO, &Command::Program { pages: &pages, tags: &tags }) {
                    return Err(TestCaseError::fail(format!(
                        "device refused multi-plane program {pages:?}: {e}"
                    )));
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Every decision of every scheduler is well formed, and every multi-plane or SOML
    /// command built from one is accepted by the device.
    #[test]
    fn every_decision_forms_a_command_the_device_accepts(c in case()) {
        let b = c.bench();
        let dev = prepared_device(&b);
        let slot = Slot { die: lamina_nand_model::DieId(0), suspend: c.suspend, writes_blocked: c.blocked };
        for kind in SchedulerKind::ALL {
            let mut s = c.scheduler(kind, &b);
            // Sprinkler keeps state between calls: decide a few times.
            for _ in 0..3 {
                let d = b.decide(s.as_mut(), slot);
                check(kind, &c, &b, &slot, &d, &dev)?;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The engine skips the scheduler when it claims a lone entry is served alone
    /// (`serves_lone_head`, `serves_lone_single`): the claim must hold in every state.
    /// Each case's queues are cut down to one entry of one eligible queue (each class in
    /// turn), and every scheduler that claims it must decide exactly that entry.
    #[test]
    fn schedulers_that_claim_it_serve_a_lone_entry_alone(c in case()) {
        let full = c.bench();
        let slot = Slot { die: lamina_nand_model::DieId(0), suspend: c.suspend, writes_blocked: c.blocked };
        for class in 0..3 {
            let mut b = Bench { spec: full.spec.clone(), view: full.view.clone(), q: full.q.clone(), seq: full.seq };
            let q = &mut b.q;
            let (expect, len) = match class {
                0 => (Choice::Read, q.reads.len()),
                1 if !c.suspend && !c.blocked => (Choice::Write, q.writes.len()),
                2 if !c.suspend => (Choice::Gc, q.gc.len()),
                _ => continue,
            };
            if len == 0 {
                continue;
            }
            // Keep one entry of the class (the case's own, so the view maps it), drop
            // the other classes' eligible work.
            let keep = c.window as usize % len;
            let one: std::collections::VecDeque<_> =
                if class == 0 { q.reads.drain(..).nth(keep).into_iter().collect() } else { Default::default() };
            q.reads = one;
            if class == 1 {
                let one: std::collections::VecDeque<_> = q.writes.drain(..).nth(keep).into_iter().collect();
                q.writes = one;
            } else if !c.suspend && !c.blocked {
                q.writes.clear();
            }
            if class == 2 {
                let one: std::collections::VecDeque<_> = q.gc.drain(..).nth(keep).into_iter().collect();
                q.gc = one;
            } else if !c.suspend {
                q.gc.clear();
            }
            for kind in SchedulerKind::ALL {
                let mut s = c.scheduler(kind, &b);
                let (head, single) = (s.serves_lone_head(), s.serves_lone_single());
                prop_assert!(!head || single, "{}: serves_lone_head implies serves_lone_single", kind.name());
                if single {
                    let d = b.decide(s.as_mut(), slot);
                    prop_assert_eq!(d.choice, expect, "{} on class {}", kind.name(), class);
                    prop_assert_eq!(&d.picks, &vec![0], "{} on class {}", kind.name(), class);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The engine asks `pick_head` before `schedule` on every slot: where a scheduler
    /// answers it, the answer must be the decision `schedule` makes in the same state,
    /// call after call (two instances, one asked each way, so that stateful arbiters
    /// advance alike), and `fcfs` must answer it. Where a scheduler states a
    /// `head_rule` (which the engine applies instead of asking `pick_head`), the rule's
    /// pick must be that answer too, and `fcfs` must state one.
    #[test]
    fn pick_head_decides_as_schedule(c in case()) {
        let b = c.bench();
        let slot = Slot { die: lamina_nand_model::DieId(0), suspend: c.suspend, writes_blocked: c.blocked };
        for kind in SchedulerKind::ALL {
            let (mut heads, mut full) = (c.scheduler(kind, &b), c.scheduler(kind, &b));
            let rule = heads.head_rule();
            prop_assert!(kind != SchedulerKind::Fcfs || rule.is_some(), "fcfs states its head rule");
            for round in 0..3 {
                let Some(head) = heads.pick_head(&slot, &b.q) else {
                    prop_assert!(kind != SchedulerKind::Fcfs, "fcfs answers pick_head");
                    prop_assert!(rule.is_none(), "{} states a rule but does not answer pick_head", kind.name());
                    break;
                };
                if let Some(rule) = rule {
                    prop_assert_eq!(rule.pick(&slot, &b.q), head, "{} round {}: head rule", kind.name(), round);
                }
                let d = b.decide(full.as_mut(), slot);
                let expect = match head {
                    None => (Choice::Idle, vec![]),
                    Some(Class::Read) => (Choice::Read, vec![0]),
                    Some(Class::Write) => (Choice::Write, vec![0]),
                    Some(Class::Gc) => (Choice::Gc, vec![0]),
                };
                prop_assert_eq!((d.choice, d.picks.clone()), expect, "{} round {}", kind.name(), round);
            }
        }
    }
}

#[test]
fn the_lone_entry_claims_are_made() {
    // Guard against a vacuous property: the claims the engine relies on are made.
    let spec = lamina_nand_model::preset("mqsim-default").unwrap().validate().unwrap();
    let claims = |k| {
        let s = build(k, &spec, ArbiterKind::ReadFirst, GcMode::Blocking, 2, 8);
        (s.serves_lone_head(), s.serves_lone_single())
    };
    assert_eq!(claims(SchedulerKind::Fcfs), (true, true));
    assert_eq!(claims(SchedulerKind::Multiplane), (false, true));
    assert_eq!(claims(SchedulerKind::Sprinkler), (false, false));
    assert_eq!(claims(SchedulerKind::Mbm), (false, true));
}

#[test]
fn the_property_test_forms_wide_commands() {
    // Guard against a vacuous property: the property test's cases (2000, as there) do
    // form many multi-plane reads and programs and SOML reads.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut wide_reads, mut soml, mut wide_writes, mut rs_reads) = (0, 0, 0, 0);
    for _ in 0..2000 {
        let c = case().new_tree(&mut runner).expect("case").current();
        let b = c.bench();
        let slot = Slot { die: lamina_nand_model::DieId(0), suspend: c.suspend, writes_blocked: c.blocked };
        for kind in SchedulerKind::ALL {
            let d = b.decide(c.scheduler(kind, &b).as_mut(), slot);
            match d.choice {
                Choice::Read if d.picks.len() > 1 && kind == SchedulerKind::Mbm => rs_reads += 1,
                Choice::Read if d.picks.len() > 1 => wide_reads += 1,
                Choice::SomlRead => soml += 1,
                Choice::Write if d.picks.len() > 1 && c.aligned.is_none() => wide_writes += 1,
                _ => {}
            }
        }
    }
    assert!(
        wide_reads > 70 && soml > 20 && wide_writes > 50 && rs_reads > 8,
        "reads {wide_reads}, soml {soml}, writes {wide_writes}, RS reads of one request {rs_reads}"
    );
}

/// Sprinkler's RIOS at the device queue: the waiting request with the largest share of
/// its pages on idle dies enters first (oldest on a tie); the oldest is passed over at
/// most `window` times in a row. The other schedulers admit first come, first served.
#[test]
fn sprinkler_admits_the_request_whose_dies_are_idle() {
    use lamina_sched::Waiting;
    let spec = lamina_nand_model::preset("mqsim-default").unwrap().validate().unwrap();
    for kind in [SchedulerKind::Fcfs, SchedulerKind::Multiplane] {
        assert!(!build(kind, &spec, ArbiterKind::ReadFirst, GcMode::Blocking, 2, 32).reorders_admission());
    }
    let mut s = build(SchedulerKind::Sprinkler, &spec, ArbiterKind::ReadFirst, GcMode::Blocking, 2, 2);
    assert!(s.reorders_admission());
    let w = |pages, idle_pages| Waiting { pages, idle_pages };
    // 1/4 idle, 2/2 idle, 3/3 idle: the first full share wins (oldest on a tie).
    assert_eq!(s.admit(&[w(4, 1), w(2, 2), w(3, 3)]), 1);
    // A larger share wins over a larger count: 2/8 < 1/2.
    assert_eq!(s.admit(&[w(8, 2), w(2, 1)]), 1);
    // The head has now been passed over twice (= window): it goes next, whatever else.
    assert_eq!(s.admit(&[w(8, 0), w(1, 1)]), 0);
    // And the count restarts.
    assert_eq!(s.admit(&[w(8, 0), w(1, 1)]), 1);
    assert_eq!(s.admit(&[w(1, 0)]), 0);
}
