//! The conformance harness (`lamina_ftl::testing`) applied to the page FTL on small
//! geometries that force GC, to a second independent FTL written here (proving the
//! harness is FTL-agnostic, and showing what implementing `Ftl` takes), and to
//! deliberately broken FTLs (proving the harness catches bugs and shrinks them).

use lamina_ftl::testing::{
    ConformanceConfig, Op, check_conformance, decode_ops, fuzz_like_inputs, page_ftl_from_bytes, run_bytes,
    run_conformance, slc_geometry,
};
use lamina_ftl::{
    Allocation, BlockInfo, Ftl, FtlConfig, FtlError, FtlStats, GcJob, GcStep, GcThreshold, Lpn, PageCounts,
    PageFtl, Replication, StripeOrder, TieBreak,
};
use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn geo(channels: u32, ways: u32, dies: u32, planes: u32, blocks: u32, pages: u32) -> Geometry {
    slc_geometry(channels, ways, dies, planes, blocks, pages)
}

fn small_cfg() -> FtlConfig {
    FtlConfig { overprovisioning: 0.3, gc_threshold: GcThreshold::FreeBlocks(2), ..FtlConfig::default() }
}

fn maker(g: Geometry, cfg: FtlConfig) -> impl Fn() -> PageFtl {
    move || PageFtl::new(g.clone(), &cfg).unwrap()
}

/// The page FTL always knows the page of the next write: the harness holds it to that.
fn conf(cases: u32, ops: std::ops::Range<usize>) -> ConformanceConfig {
    ConformanceConfig { cases, ops, exact_write_addr: true, ..ConformanceConfig::default() }
}

const ALLOCATIONS: [Allocation; 2] = [Allocation::PerPlane, Allocation::DieAligned];

fn with(allocation: Allocation, cfg: FtlConfig) -> FtlConfig {
    FtlConfig { allocation, ..cfg }
}

// 4 planes × 8 blocks × 4 pages = 128 pages, 89 logical: a few hundred writes force GC
// on every plane many times. Die-aligned: two dies of two planes.
#[test]
fn page_ftl_conforms_with_static_placement() {
    let g = geo(2, 1, 1, 2, 8, 4);
    for a in ALLOCATIONS {
        run_conformance(maker(g.clone(), with(a, small_cfg())), &conf(96, 1..500));
    }
}

#[test]
fn page_ftl_conforms_in_every_configuration() {
    let g = geo(1, 2, 1, 2, 6, 8);
    for allocation in ALLOCATIONS {
        for tie in [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn] {
            for wl in [false, true] {
                for copyback in [false, true] {
                    let cfg = FtlConfig {
                        victim_tie_break: tie,
                        wear_leveling: wl,
                        copyback,
                        overprovisioning: 0.4,
                        allocation,
                        ..small_cfg()
                    };
                    let c = ConformanceConfig { seed: 7, ..conf(12, 100..600) };
                    run_conformance(maker(g.clone(), cfg), &c);
                }
            }
        }
    }
}

// The engine's remapping (`[remap]`): the top logical pages hold remap copies, written,
// read and trimmed over and over while host pages are written around them; GC must move
// them like any page (the engine reads a copy through `lookup`).
#[test]
fn page_ftl_conforms_with_remap_pages() {
    let g = geo(2, 1, 1, 2, 8, 4);
    for a in ALLOCATIONS {
        let c = ConformanceConfig { remap_lpns: 8, seed: 11, ..conf(96, 1..500) };
        run_conformance(maker(g.clone(), with(a, small_cfg())), &c);
    }
}

// RAIN 1 replication (`ftl.replication = "rain1"`, soml-read Fig. 11a): the harness
// writes and trims every host page's mirror with it, as the engine does, and checks
// after every operation and GC step that the two copies lie on different chips.
#[test]
fn page_ftl_conforms_with_rain1_replication() {
    for g in [geo(2, 1, 1, 2, 8, 4), geo(2, 2, 1, 1, 8, 4)] {
        for a in ALLOCATIONS {
            let cfg = FtlConfig { replication: Replication::Rain1, ..with(a, small_cfg()) };
            let probe = PageFtl::new(g.clone(), &cfg).unwrap();
            assert_eq!(probe.replica(Lpn(0)), Some(Lpn(probe.host_pages())));
            run_conformance(maker(g.clone(), cfg), &ConformanceConfig { seed: 13, ..conf(64, 1..400) });
        }
    }
}

#[test]
fn page_ftl_conforms_with_dynamic_placement() {
    let g = geo(2, 1, 1, 2, 8, 4);
    let cfg = ConformanceConfig { dynamic_placement: true, seed: 3, ..conf(96, 1..500) };
    for a in ALLOCATIONS {
        run_conformance(maker(g.clone(), with(a, small_cfg())), &cfg);
    }
}

#[test]
fn page_ftl_conforms_with_every_striping_order() {
    let g = geo(2, 2, 2, 2, 6, 2);
    for a in ALLOCATIONS {
        for order in StripeOrder::all() {
            let cfg =
                FtlConfig { striping_order: order, overprovisioning: 0.5, allocation: a, ..small_cfg() };
            run_conformance(maker(g.clone(), cfg), &ConformanceConfig { hot_lpns: 40, ..conf(4, 200..400) });
        }
    }
}

// Four planes per die: rows of four, and partial rows when one plane runs dry.
#[test]
fn page_ftl_conforms_with_four_planes_per_die() {
    let g = geo(1, 1, 2, 4, 6, 4);
    for a in ALLOCATIONS {
        let cfg = FtlConfig { overprovisioning: 0.4, allocation: a, ..small_cfg() };
        let c = ConformanceConfig { hot_lpns: 40, ..conf(48, 100..700) };
        run_conformance(maker(g.clone(), cfg.clone()), &c);
        run_conformance(maker(g.clone(), cfg), &ConformanceConfig { dynamic_placement: true, seed: 5, ..c });
    }
}

// SSDsim anchor bug: GC hung with more than 64 pages per block. 128 pages per block here,
// and enough writes for several GC rounds per plane.
#[test]
fn page_ftl_conforms_with_128_pages_per_block() {
    let g = geo(1, 1, 1, 2, 6, 128);
    for a in ALLOCATIONS {
        let cfg = FtlConfig { overprovisioning: 0.4, allocation: a, ..small_cfg() };
        let c = ConformanceConfig { hot_lpns: 200, ..conf(6, 2500..3000) };
        run_conformance(maker(g.clone(), cfg), &c);
    }
}

#[test]
fn page_ftl_conforms_with_one_page_per_block() {
    let g = geo(1, 1, 1, 2, 12, 1);
    for a in ALLOCATIONS {
        let cfg = FtlConfig { overprovisioning: 0.4, allocation: a, ..small_cfg() };
        run_conformance(maker(g.clone(), cfg), &ConformanceConfig { hot_lpns: 6, ..conf(64, 1..200) });
    }
}

#[test]
fn page_ftl_conforms_when_driven_from_random_bytes() {
    let g = geo(2, 1, 1, 2, 8, 4);
    let make = maker(g, small_cfg());
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    for _ in 0..64 {
        let len = (rng.next_u64() % 1500) as usize;
        // Small operands so that LPNs repeat and GC runs.
        let bytes: Vec<u8> = (0..len)
            .map(|i| if i % 3 == 0 { rng.next_u64() as u8 } else { (rng.next_u64() % 4) as u8 })
            .collect();
        if let Err(f) = run_bytes(make(), &bytes) {
            panic!("{f}");
        }
    }
}

// What the cargo-fuzz target does, on random bytes: every byte-chosen configuration.
#[test]
fn byte_chosen_page_ftls_conform() {
    let mut built = 0;
    for bytes in fuzz_like_inputs(12, 300) {
        let Some((ftl, ops)) = page_ftl_from_bytes(&bytes) else { continue };
        built += 1;
        if let Err(f) = run_bytes(ftl, ops) {
            panic!("config bytes {:?}: {f}", &bytes[..3]);
        }
    }
    assert!(built > 250);
}

#[test]
fn decode_ops_reads_tags_and_operands() {
    assert_eq!(
        decode_ops(&[0, 5, 0, 4 + 8 * 3, 1, 1, 5, 2, 0, 6, 2, 0, 7 + 8 * 2, 1]),
        vec![Op::Write(5), Op::WriteTo(257, 3), Op::Read(2), Op::Trim(2), Op::GcStep(2), Op::Write(0)]
    );
}

/// A second, independent page-mapping FTL: flat tables, a linear-scan greedy GC, the same
/// reserve rule as `PageFtl`. With `forget_invalidate` it has a classic bug: overwrites
/// leave the old page marked valid.
struct TinyFtl {
    geo: Geometry,
    logical: u64,
    forget_invalidate: bool,
    map: Vec<Option<Ppa>>,
    rev: Vec<Option<Lpn>>,
    written: Vec<u32>,
    valid: Vec<u32>,
    erases: Vec<u32>,
    free: Vec<Vec<u32>>,
    active: Vec<Option<u32>>,
    gc: Vec<Option<(u32, bool)>>,
    stats: FtlStats,
}

impl TinyFtl {
    fn new(geo: Geometry, forget_invalidate: bool) -> TinyFtl {
        let (planes, bpp, ppb) = (geo.total_planes(), geo.blocks_per_plane(), geo.pages_per_block());
        let logical = (bpp as u64 - 3) * ppb as u64 * planes as u64;
        TinyFtl {
            logical,
            forget_invalidate,
            map: vec![None; logical as usize],
            rev: vec![None; geo.total_pages() as usize],
            written: vec![0; geo.total_blocks() as usize],
            valid: vec![0; geo.total_blocks() as usize],
            erases: vec![0; geo.total_blocks() as usize],
            free: (0..planes).map(|p| (p * bpp..(p + 1) * bpp).rev().collect()).collect(),
            active: vec![None; planes as usize],
            gc: vec![None; planes as usize],
            stats: FtlStats::default(),
            geo,
        }
    }
    fn ppb(&self) -> u32 {
        self.geo.pages_per_block()
    }
    fn room(&self, p: usize) -> u64 {
        let rest = self.active[p].map_or(0, |b| self.ppb() - self.written[b as usize]);
        rest as u64 + self.free[p].len() as u64 * self.ppb() as u64
    }
    fn unvalidate(&mut self, ppa: Ppa) {
        self.rev[ppa.0 as usize] = None;
        let b = (ppa.0 / self.ppb() as u64) as usize;
        self.valid[b] -= 1;
    }
    fn program(&mut self, p: usize, lpn: Lpn) -> Ppa {
        let b = match self.active[p] {
            Some(b) => b,
            None => self.free[p].pop().expect("reserve"),
        };
        let ppa = Ppa(b as u64 * self.ppb() as u64 + self.written[b as usize] as u64);
        self.written[b as usize] += 1;
        self.valid[b as usize] += 1;
        self.active[p] = (self.written[b as usize] < self.ppb()).then_some(b);
        self.rev[ppa.0 as usize] = Some(lpn);
        self.map[lpn.0 as usize] = Some(ppa);
        ppa
    }
}

impl Ftl for TinyFtl {
    fn geometry(&self) -> &Geometry {
        &self.geo
    }
    fn logical_pages(&self) -> u64 {
        self.logical
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        self.map[lpn.0 as usize]
    }
    fn static_plane(&self, lpn: Lpn) -> PlaneId {
        PlaneId((lpn.0 % self.geo.total_planes() as u64) as u32)
    }
    fn can_write(&self, plane: PlaneId) -> bool {
        let p = plane.idx();
        let pending = self.gc[p].map_or(0, |(v, erased)| if erased { 0 } else { self.valid[v as usize] });
        self.room(p) > self.ppb() as u64 + pending as u64
    }
    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        let p = plane.idx();
        if !self.can_write(plane) {
            self.stats.host_writes_refused += 1;
            return Err(FtlError::NoFreePage { plane });
        }
        if let Some(old) = self.map[lpn.0 as usize]
            && !self.forget_invalidate
        {
            self.unvalidate(old);
        }
        self.stats.host_writes += 1;
        Ok(self.program(p, lpn))
    }
    fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
        let old = self.map[lpn.0 as usize].take()?;
        self.unvalidate(old);
        self.stats.trims += 1;
        Some(old)
    }
    fn needs_gc(&self, plane: PlaneId) -> bool {
        self.free[plane.idx()].len() < 2
    }
    fn gc_in_progress(&self, plane: PlaneId) -> bool {
        self.gc[plane.idx()].is_some()
    }
    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let (bpp, ppb) = (self.geo.blocks_per_plane(), self.ppb());
        let victim = (plane.0 * bpp..(plane.0 + 1) * bpp)
            .filter(|&b| self.written[b as usize] == ppb && self.valid[b as usize] < ppb)
            .min_by_key(|&b| (self.valid[b as usize], b))?;
        self.gc[plane.idx()] = Some((victim, false));
        self.stats.gc_jobs += 1;
        let valid = self.valid[victim as usize];
        Some(GcJob { victim: BlockId(victim), valid_pages: valid, invalid_pages: ppb - valid })
    }
    fn gc_step(&mut self, plane: PlaneId) -> GcStep {
        let Some((v, erased)) = self.gc[plane.idx()] else { return GcStep::Done };
        if erased {
            self.gc[plane.idx()] = None;
            return GcStep::Done;
        }
        let first = v as u64 * self.ppb() as u64;
        let found = (first..first + self.ppb() as u64).find(|&p| self.rev[p as usize].is_some());
        if let Some(from) = found {
            let lpn = self.rev[from as usize].unwrap();
            self.unvalidate(Ppa(from));
            let to = self.program(plane.idx(), lpn);
            self.stats.gc_moves += 1;
            return GcStep::Move { lpn, from: Ppa(from), to, copyback: false, batch_with_next: false };
        }
        self.written[v as usize] = 0;
        self.erases[v as usize] += 1;
        self.free[plane.idx()].insert(0, v);
        self.gc[plane.idx()] = Some((v, true));
        self.stats.erases += 1;
        GcStep::Erase { block: BlockId(v), batch_with_next: false }
    }
    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.free[plane.idx()].len() as u32
    }
    fn page_counts(&self, plane: PlaneId) -> PageCounts {
        let bpp = self.geo.blocks_per_plane();
        let blocks = (plane.0 * bpp..(plane.0 + 1) * bpp).map(|b| b as usize);
        let valid: u64 = blocks.map(|b| self.valid[b] as u64).sum();
        let free = self.room(plane.idx());
        PageCounts { free, valid, invalid: bpp as u64 * self.ppb() as u64 - free - valid }
    }
    fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
        self.rev[ppa.0 as usize]
    }
    fn block_info(&self, block: BlockId) -> BlockInfo {
        let b = block.idx();
        BlockInfo { programmed: self.written[b], valid: self.valid[b], erase_count: self.erases[b] }
    }
    fn stats(&self) -> FtlStats {
        self.stats
    }
}

#[test]
fn an_independent_correct_ftl_conforms() {
    let g = geo(1, 1, 2, 2, 7, 4);
    let conf = |cases, ops| ConformanceConfig { exact_write_addr: false, ..conf(cases, ops) };
    run_conformance(|| TinyFtl::new(g.clone(), false), &conf(64, 1..500));
    let dynamic = ConformanceConfig { dynamic_placement: true, ..conf(64, 1..500) };
    run_conformance(|| TinyFtl::new(g.clone(), false), &dynamic);
}

#[test]
fn harness_catches_a_forgotten_invalidation_and_shrinks_it() {
    let g = geo(1, 1, 2, 2, 7, 4);
    let c = ConformanceConfig { exact_write_addr: false, ..conf(64, 1..500) };
    let failure = check_conformance(|| TinyFtl::new(g.clone(), true), &c)
        .expect_err("an FTL that never invalidates overwritten pages must fail");
    // Minimal: write an LPN, write it again.
    assert_eq!(failure.ops.len(), 2, "{failure}");
    assert!(matches!(failure.ops[..], [Op::Write(a), Op::Write(b)] if a == b), "{failure}");
    assert!(failure.message.contains("reverse map"), "{failure}");
}

/// A `PageFtl` with one injected bug.
struct Broken {
    inner: PageFtl,
    bug: Bug,
}

#[derive(Clone, Copy)]
enum Bug {
    /// `trim` does nothing (but claims success).
    IgnoreTrim,
    /// A GC move is performed but not reported (the engine never copies the data).
    SwallowMove,
    /// `page_counts` forgets the active block's free pages.
    MiscountFree,
}

impl Ftl for Broken {
    fn geometry(&self) -> &Geometry {
        self.inner.geometry()
    }
    fn logical_pages(&self) -> u64 {
        self.inner.logical_pages()
    }
    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        self.inner.lookup(lpn)
    }
    fn static_plane(&self, lpn: Lpn) -> PlaneId {
        self.inner.static_plane(lpn)
    }
    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        self.inner.write(lpn, plane)
    }
    fn can_write(&self, plane: PlaneId) -> bool {
        self.inner.can_write(plane)
    }
    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)> {
        self.inner.next_write_addr(plane)
    }
    fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
        match self.bug {
            Bug::IgnoreTrim => self.inner.lookup(lpn),
            _ => self.inner.trim(lpn),
        }
    }
    fn needs_gc(&self, plane: PlaneId) -> bool {
        self.inner.needs_gc(plane)
    }
    fn gc_in_progress(&self, plane: PlaneId) -> bool {
        self.inner.gc_in_progress(plane)
    }
    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        self.inner.gc_begin(plane)
    }
    fn gc_step(&mut self, plane: PlaneId) -> GcStep {
        match (self.bug, self.inner.gc_step(plane)) {
            (Bug::SwallowMove, GcStep::Move { .. }) => self.inner.gc_step(plane),
            (_, step) => step,
        }
    }
    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.inner.free_blocks(plane)
    }
    fn page_counts(&self, plane: PlaneId) -> PageCounts {
        let c = self.inner.page_counts(plane);
        match self.bug {
            Bug::MiscountFree => {
                let full = self.inner.free_blocks(plane) as u64 * self.geometry().pages_per_block() as u64;
                PageCounts { free: full, invalid: c.invalid + c.free - full, ..c }
            }
            _ => c,
        }
    }
    fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
        self.inner.page_lpn(ppa)
    }
    fn block_info(&self, block: BlockId) -> BlockInfo {
        self.inner.block_info(block)
    }
    fn stats(&self) -> FtlStats {
        self.inner.stats()
    }
}

fn broken(bug: Bug) -> impl Fn() -> Broken {
    let g = geo(2, 1, 1, 2, 8, 4);
    move || Broken { inner: PageFtl::new(g.clone(), &small_cfg()).unwrap(), bug }
}

#[test]
fn harness_catches_an_ignored_trim() {
    let failure = check_conformance(broken(Bug::IgnoreTrim), &conf(64, 1..300)).expect_err("must fail");
    assert_eq!(failure.ops.len(), 2, "{failure}");
    assert!(matches!(failure.ops[..], [Op::Write(a), Op::Trim(b)] if a == b), "{failure}");
}

#[test]
fn harness_catches_a_swallowed_gc_move() {
    let failure = check_conformance(broken(Bug::SwallowMove), &conf(64, 1..500)).expect_err("must fail");
    assert!(failure.ops.iter().any(|op| matches!(op, Op::Write(_))), "{failure}");
    assert!(failure.message.contains("GC step"), "{failure}");
}

#[test]
fn harness_catches_miscounted_free_pages() {
    let failure = check_conformance(broken(Bug::MiscountFree), &conf(64, 1..300)).expect_err("must fail");
    // One write opens an active block whose free pages are then miscounted.
    assert_eq!(failure.ops.len(), 1, "{failure}");
    assert!(failure.message.contains("free/valid/invalid"), "{failure}");
}

// The property tests above must actually reach GC, and host writes must really
// interleave with a running job; check both on fixed sequences.
#[test]
fn harness_sequences_reach_gc_and_interleave_host_writes_with_jobs() {
    use lamina_ftl::testing::Harness;
    let g = geo(1, 1, 1, 2, 8, 4);
    let mut h = Harness::new(PageFtl::new(g, &small_cfg()).unwrap());
    let plane = PlaneId(0);
    // 44 LPNs; plane 0 gets the even ones (CWDP over 2 planes). Every block gets cold and hot
    // pages, so victims hold valid data to move.
    for i in 0..24 {
        let lpn = if i % 2 == 0 { 6 + i } else { 2 * (i % 3) };
        h.apply(Op::Write(lpn)).unwrap();
    }
    // Start a background job on plane 0, take one step, then write to the same plane
    // while the job is still running, then let it finish.
    h.apply(Op::GcStep(0)).unwrap();
    assert!(h.ftl().gc_in_progress(plane));
    h.apply(Op::GcStep(0)).unwrap();
    assert_eq!(h.ftl().stats().gc_moves, 1, "the first step moved a valid page");
    assert!(h.ftl().gc_in_progress(plane));
    h.apply(Op::Write(2)).unwrap();
    h.apply(Op::Write(40)).unwrap();
    while h.ftl().gc_in_progress(plane) {
        h.apply(Op::GcStep(0)).unwrap();
    }
    // Keep overwriting until the threshold-driven GC has run several times.
    for i in 0..200 {
        h.apply(Op::Write(2 * (i % 9))).unwrap();
    }
    let s = h.ftl().stats();
    assert!(s.gc_moves > 0 && s.erases >= 5, "{s:?}");
}

/// The page FTL's move log, through a wrapper that forgets the last page logged before
/// each hand-out (or, with `.1`, reports every hand-out as overflowed).
struct LossyLog(PageFtl, bool);

impl Ftl for LossyLog {
    lamina_ftl::forward_ftl_required!();

    fn log_moves(&mut self) -> bool {
        self.0.log_moves()
    }
    fn take_moves(&mut self, out: &mut Vec<Lpn>) -> bool {
        let complete = self.0.take_moves(out);
        if self.1 {
            return false;
        }
        out.pop();
        complete
    }
}

// The harness turns on the page FTL's move log and checks it after every operation
// (through GC, trims, groups and dynamic writes); a log that misses one page fails at
// once, one that admits its overflow passes.
#[test]
fn harness_checks_the_move_log() {
    let g = geo(2, 1, 1, 2, 8, 4);
    for a in ALLOCATIONS {
        let cfg = ConformanceConfig { dynamic_placement: true, ..conf(64, 1..400) };
        run_conformance(maker(g.clone(), with(a, small_cfg())), &cfg);
    }
    let lossy = |overflow| {
        let g = g.clone();
        move || LossyLog(PageFtl::new(g.clone(), &small_cfg()).unwrap(), overflow)
    };
    let failure = check_conformance(lossy(false), &conf(32, 1..50)).expect_err("must fail");
    assert_eq!(failure.ops.len(), 1, "{failure}");
    assert!(failure.message.contains("the move log did not name it"), "{failure}");
    check_conformance(lossy(true), &conf(32, 1..200)).expect("an overflowed log names nothing and passes");
}

// The log's bound: past its capacity it records nothing more and says so once.
#[test]
fn move_log_overflows_and_says_so() {
    let mut log = lamina_ftl::MoveLog::default();
    let mut out = Vec::new();
    for l in 0..3 {
        log.push(Lpn(l));
    }
    assert!(log.take(&mut out));
    assert_eq!(out, [Lpn(0), Lpn(1), Lpn(2)]);
    for l in 0..=lamina_ftl::MoveLog::CAPACITY as u64 {
        log.push(Lpn(l));
    }
    out.clear();
    assert!(!log.take(&mut out), "overflowed");
    assert!(out.is_empty());
    log.push(Lpn(7));
    assert!(log.take(&mut out), "emptied: records again");
    assert_eq!(out, [Lpn(7)]);
}
