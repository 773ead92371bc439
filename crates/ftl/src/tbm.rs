//! Twin-block management (`ftl.kind = "tbm"`): page-level mapping whose blocks are
//! allocated, garbage-collected and erased in **twins**.
//!
//! Tavakkol, Mehrvarzy and Sarbazi-Azad, "TBM: Twin Block Management Policy to Enhance
//! the Utilization of Plane-Level Parallelism in SSDs", IEEE Computer Architecture Letters
//! 15(2), 2016 — reference \[17\] of the MBM FTL paper, which summarises it (§V) as "TBM
//! symmetrically conducts usage and recycling of the flash block addresses on the planes
//! of a die", "when performing GC, it forces the valid pages to be migrated into planes
//! equally", with "unrestricted parallel reading". Our reading (`docs/ftl.md`):
//!
//! * A **twin** is one block index on every plane of a die. Allocation, GC and erase work
//!   on twins only, so the planes of a die always hold the same block indices in the same
//!   state and every host write can join a multi-plane program.
//! * **Host writes** ([`WriteConstraint::Die`]): the die's host twin is filled plane 0, 1,
//!   …, P−1 at one page, then the next page (round-robin, as the page FTL's die-aligned
//!   rows, but never misaligned: a twin is free on all planes or on none).
//! * **GC** is a job per die (named by whichever plane of the die started it): the greedy
//!   victim is the closed twin with the most invalid pages (ties: `ftl.victim_tie_break`);
//!   its valid pages, read page by page across the planes, are migrated round-robin into
//!   the die's GC twin — equally over the planes — so GC never shifts the host frontier.
//!   A move is flagged `batch_with_next` when it and the next one can be one multi-plane
//!   program: both stay in their plane, from sibling planes at one victim page to sibling
//!   planes at one GC-twin page. The twin
//!   is then erased as one multi-plane erase: a chain of [`GcStep::Erase`]s flagged
//!   `batch_with_next`, one per plane.
//! * **Reads** are always eligible for multi-plane reads; that is the scheduler's choice,
//!   and the aligned layout is all the FTL contributes.
//! * **Wear levelling**: a new twin is the free twin least erased (its blocks are always
//!   erased together), ties lowest index; off, the lowest free index.
//!
//! # Reserve
//!
//! The die's *GC room* is the rest of its GC twin plus its free twins. A host twin may be
//! taken only if the GC room afterwards still covers the valid pages the running job has
//! to move, or a whole victim's worth (`P × pages_per_block − 1`) without a job; moves
//! keep *GC room − pending* constant and the erase gives a twin back, so a job always
//! finishes. With a GC threshold of at least two twins, a refusal implies `needs_gc`.
//!
//! GC is due on every plane of the die when its free twins drop below
//! `ftl.gc_threshold`; only one job runs per die, so `gc_begin` on a sibling of the plane
//! whose job is running returns `None`, and a refused write names the plane of the
//! running job (or the plane passed, which then can start one).

use std::collections::BTreeSet;

use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts, WriteConstraint};
use crate::config::{FtlConfig, FtlConfigError, FtlKind, TieBreak, ValidatedFtlConfig};
use crate::lpn_map::LpnMap;

/// "No twin" in a cursor; unmapped reverse-map entry.
const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TwinState {
    Free,
    /// The host or GC twin of its die.
    Open,
    Closed,
    Victim,
}

#[derive(Clone, Copy, Debug)]
struct Twin {
    state: TwinState,
    /// Valid pages over all planes.
    valid: u32,
    /// When it was closed (the `oldest` tie-break).
    closed_seq: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Block {
    written: u32,
    valid: u32,
    erase_count: u32,
}

/// A write frontier of a die: the next page goes to plane `slot` (within the die),
/// page `page` of twin `twin` (`NONE`: no twin open).
#[derive(Clone, Copy, Debug)]
struct Cursor {
    twin: u32,
    page: u32,
    slot: u32,
}

const CLOSED_CURSOR: Cursor = Cursor { twin: NONE, page: 0, slot: 0 };

/// The GC job of a die.
#[derive(Clone, Copy, Debug)]
struct Job {
    /// The plane whose `gc_begin` started it (the job's name).
    plane: u32,
    victim: u32,
    /// Scan position in the victim: next page, and plane (within the die) at that page.
    page: u32,
    slot: u32,
    /// Erase phase: planes of the victim erased so far.
    erased: Option<u32>,
}

#[derive(Clone, Debug)]
struct DieState {
    host: Cursor,
    gc: Cursor,
    /// Free twins keyed by `erase_count << 32 | index` (wear levelling) or `index`.
    free: BTreeSet<u64>,
    job: Option<Job>,
}

/// The twin-block-management FTL. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct TbmFtl {
    geometry: Geometry,
    cfg: ValidatedFtlConfig,
    ppb: u32,
    bpp: u32,
    ppd: u32,
    static_planes: Box<[PlaneId]>,
    /// `ppa + 1` of each logical page, 0 when unmapped. Changed only through `map_set`.
    map: LpnMap,
    /// The pages whose mapping changed, once [`Ftl::log_moves`] asked for them.
    moves: crate::MoveLog,
    /// Reverse map (page → LPN) of each written block, recycled through `rev_pool`.
    rev: Vec<Option<Box<[u32]>>>,
    rev_pool: Vec<Box<[u32]>>,
    blocks: Vec<Block>,
    /// `die × blocks_per_plane + index`.
    twins: Vec<Twin>,
    dies: Vec<DieState>,
    /// Per plane: (valid pages, programmed pages).
    plane_pages: Vec<(u64, u64)>,
    close_seq: u64,
    stats: FtlStats,
}

impl TbmFtl {
    /// Build the FTL for `geometry`, validating `config` (as `ftl.kind = "tbm"`) against it.
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<TbmFtl, FtlConfigError> {
        let cfg = FtlConfig { kind: FtlKind::Tbm, ..config.clone() }.validate(&geometry)?;
        assert!(geometry.total_pages() < u32::MAX as u64, "32-bit page tables");
        let (ppb, bpp, ppd) =
            (geometry.pages_per_block(), geometry.blocks_per_plane(), geometry.planes_per_die());
        let static_planes = (0..geometry.total_planes() as u64)
            .map(|r| cfg.config.striping_order.plane_of(&geometry, r))
            .collect();
        let die =
            DieState { host: CLOSED_CURSOR, gc: CLOSED_CURSOR, free: (0..bpp as u64).collect(), job: None };
        let twin = Twin { state: TwinState::Free, valid: 0, closed_seq: 0 };
        Ok(TbmFtl {
            ppb,
            bpp,
            ppd,
            static_planes,
            map: LpnMap::zeroed(cfg.logical_pages),
            moves: crate::MoveLog::default(),
            rev: (0..geometry.total_blocks()).map(|_| None).collect(),
            rev_pool: Vec::new(),
            blocks: vec![Block::default(); geometry.total_blocks() as usize],
            twins: vec![twin; (geometry.total_dies() * bpp) as usize],
            dies: vec![die; geometry.total_dies() as usize],
            plane_pages: vec![(0, 0); geometry.total_planes() as usize],
            close_seq: 0,
            stats: FtlStats::default(),
            geometry,
            cfg,
        })
    }

    /// Set `lpn`'s map entry (`ppa + 1`, 0 = unmapped) and record it in the move log.
    #[inline]
    fn map_set(&mut self, lpn: u64, entry: u32) {
        self.map.set(lpn, entry);
        self.moves.record(Lpn(lpn));
    }

    #[inline]
    fn mapped(&self, lpn: u64) -> Option<u32> {
        self.map.get(lpn).checked_sub(1)
    }

    /// Block `index` of plane `i` (within the die) of `die`.
    #[inline]
    fn block_at(&self, die: u32, i: u32, index: u32) -> u32 {
        (die * self.ppd + i) * self.bpp + index
    }

    #[inline]
    fn twin_pages(&self) -> u64 {
        self.ppd as u64 * self.ppb as u64
    }

    /// The die of `plane` (checked).
    fn die_of(&self, plane: PlaneId) -> u32 {
        assert!(plane.0 < self.geometry.total_planes(), "plane {} out of range", plane.0);
        plane.0 / self.ppd
    }

    /// Pages left in the twin a cursor is filling.
    fn rest(&self, c: Cursor) -> u64 {
        if c.twin == NONE { 0 } else { (self.ppb - c.page) as u64 * self.ppd as u64 - c.slot as u64 }
    }

    /// Valid pages the die's GC job still has to move.
    fn pending(&self, die: u32) -> u64 {
        match self.dies[die as usize].job {
            Some(Job { victim, erased: None, .. }) => {
                self.twins[(die * self.bpp + victim) as usize].valid as u64
            }
            _ => 0,
        }
    }

    fn gc_room(&self, die: u32) -> u64 {
        let d = &self.dies[die as usize];
        self.rest(d.gc) + d.free.len() as u64 * self.twin_pages()
    }

    /// The die may open a new host twin and keep its GC reserve (module docs).
    fn can_open_host(&self, die: u32) -> bool {
        if self.dies[die as usize].free.is_empty() {
            return false;
        }
        let need = match self.dies[die as usize].job {
            Some(Job { erased: None, .. }) => self.pending(die),
            _ => self.twin_pages() - 1,
        };
        self.gc_room(die) - self.twin_pages() >= need
    }

    fn die_can_write(&self, die: u32) -> bool {
        self.rest(self.dies[die as usize].host) > 0 || self.can_open_host(die)
    }

    fn free_key(&self, die: u32, index: u32) -> u64 {
        let wear = if self.cfg.config.wear_leveling {
            self.blocks[self.block_at(die, 0, index) as usize].erase_count as u64
        } else {
            0
        };
        wear << 32 | index as u64
    }

    /// Take the die's next free twin and open its blocks.
    fn open_twin(&mut self, die: u32) -> Cursor {
        let key =
            self.dies[die as usize].free.pop_first().expect("TBM: no free twin; the GC reserve was violated");
        let index = key as u32;
        let t = &mut self.twins[(die * self.bpp + index) as usize];
        assert!(t.state == TwinState::Free && t.valid == 0, "twin {index} of die {die} is not free");
        t.state = TwinState::Open;
        for i in 0..self.ppd {
            let b = self.block_at(die, i, index) as usize;
            assert_eq!(self.blocks[b].written, 0, "free block {b} was programmed");
            let ppb = self.ppb as usize;
            let mut r = self.rev_pool.pop().unwrap_or_else(|| vec![NONE; ppb].into_boxed_slice());
            r.fill(NONE);
            self.rev[b] = Some(r);
        }
        Cursor { twin: index, page: 0, slot: 0 }
    }

    /// Program `lpn` at the host (`gc` false) or GC frontier of `die`, opening a GC twin
    /// if needed (host twins are opened by `write`), and return the page. Does not touch
    /// the forward map.
    fn program(&mut self, die: u32, lpn: u64, gc: bool) -> u32 {
        let mut c = if gc { self.dies[die as usize].gc } else { self.dies[die as usize].host };
        if c.twin == NONE {
            assert!(gc, "TBM host write without an open twin");
            c = self.open_twin(die);
        }
        let b = self.block_at(die, c.slot, c.twin);
        let m = &mut self.blocks[b as usize];
        assert_eq!(m.written, c.page, "twin pages out of order");
        m.written += 1;
        m.valid += 1;
        self.rev[b as usize].as_mut().expect("open block has a reverse map")[c.page as usize] = lpn as u32;
        let pp = &mut self.plane_pages[(die * self.ppd + c.slot) as usize];
        pp.0 += 1;
        pp.1 += 1;
        let ti = (die * self.bpp + c.twin) as usize;
        self.twins[ti].valid += 1;
        let ppa = b * self.ppb + c.page;
        c.slot += 1;
        if c.slot == self.ppd {
            c.slot = 0;
            c.page += 1;
        }
        if c.page == self.ppb {
            self.twins[ti].state = TwinState::Closed;
            self.twins[ti].closed_seq = self.close_seq;
            self.close_seq += 1;
            c = CLOSED_CURSOR;
        }
        let d = &mut self.dies[die as usize];
        *(if gc { &mut d.gc } else { &mut d.host }) = c;
        ppa
    }

    /// The LPN whose current copy is page `off` of block `b`, if any (valid iff the
    /// forward map points back).
    fn valid_lpn(&self, b: u32, off: u32) -> Option<u32> {
        let lpn = self.rev[b as usize].as_ref()?[off as usize];
        (lpn != NONE && self.mapped(lpn as u64) == Some(b * self.ppb + off)).then_some(lpn)
    }

    /// Account for page `ppa` becoming stale (the caller repoints the map right after).
    fn invalidate(&mut self, ppa: u32) {
        let b = ppa / self.ppb;
        let plane = b / self.bpp;
        self.blocks[b as usize].valid -= 1;
        self.plane_pages[plane as usize].0 -= 1;
        self.twins[((plane / self.ppd) * self.bpp + b % self.bpp) as usize].valid -= 1;
    }

    /// The closed twin of `die` with the most invalid pages (ties: the configured
    /// tie-break), if one has an invalid page.
    fn select_victim(&self, die: u32) -> Option<u32> {
        let full = self.twin_pages() as u32;
        let mut best: Option<(u32, u32)> = None;
        for index in 0..self.bpp {
            let t = &self.twins[(die * self.bpp + index) as usize];
            if t.state != TwinState::Closed || t.valid == full {
                continue;
            }
            let invalid = full - t.valid;
            let better = match best {
                None => true,
                Some((bi, b)) => invalid > bi || (invalid == bi && self.tie_beats(die, index, b)),
            };
            if better {
                best = Some((invalid, index));
            }
        }
        best.map(|(_, index)| index)
    }

    /// Twin `a` beats twin `b` of `die` on the tie-break.
    fn tie_beats(&self, die: u32, a: u32, b: u32) -> bool {
        let (ta, tb) =
            (&self.twins[(die * self.bpp + a) as usize], &self.twins[(die * self.bpp + b) as usize]);
        match self.cfg.config.victim_tie_break {
            TieBreak::LowestId => a < b,
            TieBreak::Oldest => ta.closed_seq < tb.closed_seq,
            TieBreak::LeastWorn => {
                let wear = |i| self.blocks[self.block_at(die, 0, i) as usize].erase_count;
                (wear(a), a) < (wear(b), b)
            }
        }
    }

    /// The next valid page of the victim from scan position (`page`, `slot`), in page
    /// order across the planes: `(page, slot, lpn)`.
    fn next_valid(&self, die: u32, victim: u32, page: u32, slot: u32) -> Option<(u32, u32, u32)> {
        if self.twins[(die * self.bpp + victim) as usize].valid == 0 {
            return None;
        }
        let start = page * self.ppd + slot;
        (start..self.ppb * self.ppd).find_map(|k| {
            let (p, s) = (k / self.ppd, k % self.ppd);
            Some((p, s, self.valid_lpn(self.block_at(die, s, victim), p)?))
        })
    }

    /// One erase of the die's job in its erase phase: plane `i` of the victim.
    fn erase_step(&mut self, die: u32, mut job: Job, i: u32) -> GcStep {
        let b = self.block_at(die, i, job.victim);
        let m = &mut self.blocks[b as usize];
        assert!(m.valid == 0, "erasing block {b} with valid data");
        let written = m.written as u64;
        m.written = 0;
        m.erase_count += 1;
        self.plane_pages[(b / self.bpp) as usize].1 -= written;
        if let Some(r) = self.rev[b as usize].take() {
            self.rev_pool.push(r);
        }
        self.stats.erases += 1;
        let last = i + 1 == self.ppd;
        if last {
            let ti = (die * self.bpp + job.victim) as usize;
            self.twins[ti].state = TwinState::Free;
            let key = self.free_key(die, job.victim);
            self.dies[die as usize].free.insert(key);
        }
        job.erased = Some(i + 1);
        self.dies[die as usize].job = Some(job);
        GcStep::Erase { block: BlockId(b), batch_with_next: !last }
    }
}

impl Ftl for TbmFtl {
    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn logical_pages(&self) -> u64 {
        self.cfg.logical_pages
    }

    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        self.mapped(lpn.0).map(|p| Ppa(p as u64))
    }

    fn log_moves(&mut self) -> bool {
        self.moves.enable();
        true
    }

    fn take_moves(&mut self, out: &mut Vec<Lpn>) -> bool {
        self.moves.take_if_enabled(out)
    }

    fn static_plane(&self, lpn: Lpn) -> PlaneId {
        self.static_planes[(lpn.0 % self.static_planes.len() as u64) as usize]
    }

    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        let die = self.die_of(plane);
        if self.rest(self.dies[die as usize].host) == 0 {
            if !self.can_open_host(die) {
                self.stats.host_writes_refused += 1;
                let named = self.dies[die as usize].job.map_or(plane, |j| PlaneId(j.plane));
                return Err(FtlError::NoFreePage { plane: named });
            }
            let c = self.open_twin(die);
            self.dies[die as usize].host = c;
        }
        if let Some(old) = self.mapped(lpn.0) {
            self.invalidate(old);
        }
        let ppa = self.program(die, lpn.0, false);
        self.map_set(lpn.0, ppa + 1);
        self.stats.host_writes += 1;
        Ok(Ppa(ppa as u64))
    }

    fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        let old = self.mapped(lpn.0)?;
        self.invalidate(old);
        self.map_set(lpn.0, 0);
        self.stats.trims += 1;
        Some(Ppa(old as u64))
    }

    fn needs_gc(&self, plane: PlaneId) -> bool {
        let die = self.die_of(plane);
        self.dies[die as usize].free.len() < self.cfg.gc_threshold_blocks as usize
    }

    fn gc_in_progress(&self, plane: PlaneId) -> bool {
        let die = self.die_of(plane);
        self.dies[die as usize].job.is_some_and(|j| j.plane == plane.0)
    }

    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let die = self.die_of(plane);
        if let Some(j) = self.dies[die as usize].job {
            assert_ne!(j.plane, plane.0, "gc_begin on plane {} while its job is in progress", plane.0);
            return None; // a sibling plane's job is reclaiming a twin of this die
        }
        let victim = self.select_victim(die)?;
        let t = &mut self.twins[(die * self.bpp + victim) as usize];
        t.state = TwinState::Victim;
        let valid = t.valid;
        assert!(self.gc_room(die) >= valid as u64, "TBM GC reserve violated on die {die}");
        self.dies[die as usize].job = Some(Job { plane: plane.0, victim, page: 0, slot: 0, erased: None });
        self.stats.gc_jobs += 1;
        Some(GcJob {
            victim: BlockId(self.block_at(die, 0, victim)),
            valid_pages: valid,
            invalid_pages: self.twin_pages() as u32 - valid,
        })
    }

    fn gc_step(&mut self, plane: PlaneId) -> GcStep {
        let die = self.die_of(plane);
        let Some(job) = self.dies[die as usize].job.filter(|j| j.plane == plane.0) else {
            return GcStep::Done;
        };
        match job.erased {
            Some(n) if n == self.ppd => {
                self.dies[die as usize].job = None;
                return GcStep::Done;
            }
            Some(n) => return self.erase_step(die, job, n),
            None => {}
        }
        let Some((page, slot, lpn)) = self.next_valid(die, job.victim, job.page, job.slot) else {
            return self.erase_step(die, job, 0);
        };
        let from = self.block_at(die, slot, job.victim) * self.ppb + page;
        self.invalidate(from);
        let to = self.program(die, lpn as u64, true);
        self.map_set(lpn as u64, to + 1);
        let (next_page, next_slot) = if slot + 1 == self.ppd { (page + 1, 0) } else { (page, slot + 1) };
        self.dies[die as usize].job = Some(Job { page: next_page, slot: next_slot, ..job });
        // Flag the move if the next one joins it in a multi-plane program: both stay in
        // their plane, the next reads the next plane at the same victim page and writes
        // the next plane at the same GC-twin page.
        let c = self.dies[die as usize].gc;
        let same_plane = from / self.ppb / self.bpp == to / self.ppb / self.bpp;
        let batch = same_plane
            && c.twin != NONE
            && c.slot == slot + 1
            && self
                .next_valid(die, job.victim, next_page, next_slot)
                .is_some_and(|(p, q, _)| p == page && q == slot + 1);
        let copyback = self.cfg.config.copyback && same_plane;
        self.stats.gc_moves += 1;
        self.stats.gc_copybacks += copyback as u64;
        GcStep::Move {
            lpn: Lpn(lpn as u64),
            from: Ppa(from as u64),
            to: Ppa(to as u64),
            copyback,
            batch_with_next: batch,
        }
    }

    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.dies[self.die_of(plane) as usize].free.len() as u32
    }

    fn page_counts(&self, plane: PlaneId) -> PageCounts {
        self.die_of(plane);
        let (valid, programmed) = self.plane_pages[plane.idx()];
        let total = self.bpp as u64 * self.ppb as u64;
        PageCounts { free: total - programmed, valid, invalid: programmed - valid }
    }

    fn stats(&self) -> FtlStats {
        self.stats
    }

    fn block_info(&self, block: BlockId) -> BlockInfo {
        let Block { written, valid, erase_count } = self.blocks[block.idx()];
        BlockInfo { programmed: written, valid, erase_count }
    }

    fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
        let b = self.geometry.block_of(ppa);
        let lpn = self.valid_lpn(b.0, (ppa.0 - self.geometry.first_page(b).0) as u32)?;
        Some(Lpn(lpn.into()))
    }

    fn write_constraint(&self, _lpn: Lpn) -> WriteConstraint {
        WriteConstraint::Die
    }

    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)> {
        let die = self.die_of(plane);
        let c = self.dies[die as usize].host;
        if self.rest(c) > 0 {
            return Some((BlockId(self.block_at(die, c.slot, c.twin)), c.page));
        }
        if !self.can_open_host(die) {
            return None;
        }
        let key = *self.dies[die as usize].free.first().expect("can_open_host means a free twin");
        Some((BlockId(self.block_at(die, 0, key as u32)), 0))
    }

    fn can_write(&self, plane: PlaneId) -> bool {
        self.die_can_write(self.die_of(plane))
    }

    fn write_room(&self, plane: PlaneId) -> u64 {
        let die = self.die_of(plane);
        let open = if self.can_open_host(die) { self.twin_pages() } else { 0 };
        self.rest(self.dies[die as usize].host) + open
    }

    fn has_translation_reads(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GcThreshold;

    fn ftl(planes: u32) -> TbmFtl {
        let c = FtlConfig {
            kind: FtlKind::Tbm,
            overprovisioning: 0.3,
            gc_threshold: GcThreshold::FreeBlocks(2),
            ..FtlConfig::default()
        };
        TbmFtl::new(crate::testing::slc_geometry(1, 1, 1, planes, 8, 4), &c).unwrap()
    }

    fn run_job(f: &mut TbmFtl, plane: PlaneId) -> Vec<GcStep> {
        assert!(f.gc_begin(plane).is_some());
        std::iter::from_fn(|| Some(f.gc_step(plane)).filter(|s| *s != GcStep::Done)).collect()
    }

    #[test]
    fn gc_reclaims_a_twin_spreading_its_pages_and_erasing_it_as_one_command() {
        let mut f = ftl(2);
        let g = f.geometry().clone();
        // Twin 0 (blocks 0 and 8): LPNs 0..8 round-robin over the two planes.
        for l in 0..8 {
            f.write(Lpn(l), PlaneId(0)).unwrap();
        }
        // Overwrite the LPNs on plane 0 but one, and one on plane 1.
        for l in [0, 2, 4, 1] {
            f.write(Lpn(l), PlaneId(1)).unwrap();
        }
        // A sibling cannot start a second job on the die while one runs.
        assert!(f.gc_begin(PlaneId(1)).is_some());
        assert!(f.gc_begin(PlaneId(0)).is_none());
        let steps: Vec<GcStep> =
            std::iter::from_fn(|| Some(f.gc_step(PlaneId(1))).filter(|s| *s != GcStep::Done)).collect();
        let moves: Vec<(u32, u32, bool)> = steps
            .iter()
            .filter_map(|s| match *s {
                GcStep::Move { from, to, batch_with_next, .. } => {
                    Some((g.addr(from).plane, g.addr(to).plane, batch_with_next))
                }
                _ => None,
            })
            .collect();
        // Valid: LPN 6 (plane 0), 3, 5, 7 (plane 1): destinations alternate planes; only
        // LPNs 6 and 7 (page 3 of both planes, to page 1 of both) form a multi-plane move.
        assert_eq!(moves, [(1, 0, false), (1, 1, false), (0, 0, true), (1, 1, false)]);
        let erases: Vec<GcStep> =
            steps.iter().copied().filter(|s| matches!(s, GcStep::Erase { .. })).collect();
        assert_eq!(
            erases,
            [
                GcStep::Erase { block: BlockId(0), batch_with_next: true },
                GcStep::Erase { block: BlockId(8), batch_with_next: false }
            ]
        );
        assert_eq!(f.free_blocks(PlaneId(0)), f.free_blocks(PlaneId(1)));
        let mut f2 = ftl(2);
        for l in 0..8 {
            f2.write(Lpn(l), PlaneId(0)).unwrap();
        }
        f2.write(Lpn(0), PlaneId(0)).unwrap();
        assert_eq!(run_job(&mut f2, PlaneId(0)).len(), 7 + 2);
    }

    #[test]
    fn host_twins_are_always_aligned() {
        let mut f = ftl(4);
        let g = f.geometry().clone();
        for i in 0..400u64 {
            let lpn = Lpn(i * 7 % 20);
            if f.needs_gc(PlaneId(0)) {
                run_job(&mut f, PlaneId(0));
            }
            let p = f.write(lpn, PlaneId(2)).unwrap();
            let a = g.addr(p);
            assert_eq!(a.plane as u64, i % 4, "write {i}");
        }
        assert!(f.stats().erases > 0 && f.stats().erases % 4 == 0);
    }
}
