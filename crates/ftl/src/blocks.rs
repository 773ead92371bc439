//! Bookkeeping shared by the block-level ([`crate::NftlFtl`]) and hybrid
//! ([`crate::SuperblockFtl`]) FTLs: the flash as they see it (per-block counters, a
//! reverse map standing for the spare area of every page, per-plane free-block pools with
//! optional wear levelling), their capacity rule and their write gate.
//!
//! Both FTLs keep a flat forward map (LPN → page) as well. It is the simulator's cache of
//! what the FTL would find, not part of the modelled mapping: the decisions (where a
//! write goes, what a merge copies) follow the block-level / superblock rules, and what a
//! real controller would pay to find a page (NFTL's spare-area scan of the update block)
//! is charged separately through [`crate::Ftl::translation_reads`]. The map makes
//! `lookup` O(1) and lets validity be "the map points back here", as in the page FTL.

use std::collections::VecDeque;

use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, FtlError, FtlStats, GcStep, Lpn, PageCounts, PageRange};
use crate::config::{TieBreak, ValidatedFtlConfig};
use crate::min_queue::MinQueue;
use crate::pen::{DisturbState, Pb, PenSettings, WearGate};

/// "No block" in block slots.
pub(crate) const NONE: u32 = u32::MAX;
/// Unmapped forward-map entry / never-programmed reverse-map entry. Entries hold their
/// value plus one so that this is 0: the tables are allocated zeroed, and the operating
/// system backs untouched parts of them with no memory (a 512 GiB device costs nothing
/// until a trace touches it).
const UNMAPPED: u32 = 0;

/// Counters of one physical block.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Block {
    /// The write pointer: pages at or above it are erased; [`Flash::program`] appends
    /// here. Pages below it are programmed, except `holes` of them.
    pub(crate) written: u32,
    /// Pages below `written` that a partial erase left erased and nothing reprogrammed
    /// yet ([`Flash::program_at`] fills them). 0 for a block never partially erased since
    /// its last whole erase.
    pub(crate) holes: u32,
    /// Programmed pages holding the current copy of their LPN.
    pub(crate) valid: u32,
    /// Erases so far.
    pub(crate) erase_count: u32,
    /// When the block was last taken from the free pool (the `oldest` tie-break).
    pub(crate) opened_seq: u64,
}

/// Free blocks of one plane and its page totals.
#[derive(Clone, Debug, Default)]
struct Pool {
    /// Free blocks, first in first out (wear levelling off).
    fifo: VecDeque<u32>,
    /// Free blocks keyed by `erase_count << 32 | block` (wear levelling on), least first.
    heap: MinQueue,
    /// Pages programmed in the plane since their blocks' last erase.
    written: u64,
    /// Valid pages in the plane.
    valid: u64,
}

/// The flash as a block-level or hybrid FTL sees it. See the [module docs](self).
#[derive(Clone, Debug)]
pub(crate) struct Flash {
    pub(crate) geometry: Geometry,
    pub(crate) ppb: u32,
    pub(crate) blocks_per_plane: u32,
    /// LPN → page + 1 (`UNMAPPED` if none).
    map: Vec<u32>,
    /// Page → the LPN programmed there + 1 (its spare area); valid iff `map` points back.
    rev: Vec<u32>,
    pub(crate) blocks: Vec<Block>,
    pools: Vec<Pool>,
    wear_leveling: bool,
    copyback: bool,
    tie_break: TieBreak,
    open_seq: u64,
    pub(crate) stats: FtlStats,
    /// The pages whose mapping changed, once [`crate::Ftl::log_moves`] asked for them:
    /// `map` changes only in `record_program` and `unmap`, which record it here.
    pub(crate) moves: crate::MoveLog,
}

impl Flash {
    /// Empty flash (every block free) for `cfg`, exporting `cfg.logical_pages()` pages.
    pub(crate) fn new(geometry: Geometry, cfg: &ValidatedFtlConfig) -> Flash {
        assert!(geometry.total_pages() < u32::MAX as u64, "32-bit page tables");
        let bpp = geometry.blocks_per_plane();
        let c = cfg.config();
        let pools = (0..geometry.total_planes())
            .map(|p| {
                let ids = p * bpp..(p + 1) * bpp;
                let mut pool = Pool::default();
                if c.wear_leveling {
                    pool.heap = MinQueue::from_ascending(ids.map(|b| b as u64));
                } else {
                    pool.fifo = ids.collect();
                }
                pool
            })
            .collect();
        Flash {
            ppb: geometry.pages_per_block(),
            blocks_per_plane: bpp,
            map: vec![UNMAPPED; cfg.logical_pages() as usize],
            rev: vec![UNMAPPED; geometry.total_pages() as usize],
            blocks: vec![Block::default(); geometry.total_blocks() as usize],
            pools,
            wear_leveling: c.wear_leveling,
            copyback: c.copyback,
            tie_break: c.victim_tie_break,
            open_seq: 0,
            stats: FtlStats::default(),
            moves: crate::MoveLog::default(),
            geometry,
        }
    }

    /// Logical pages exported.
    pub(crate) fn logical_pages(&self) -> u64 {
        self.map.len() as u64
    }

    /// The page holding the current copy of `lpn`, if any.
    #[inline]
    pub(crate) fn lookup(&self, lpn: u64) -> Option<u32> {
        assert!(lpn < self.map.len() as u64, "{} out of range", Lpn(lpn));
        let p = self.map[lpn as usize];
        (p != UNMAPPED).then(|| p - 1)
    }

    /// The LPN whose current copy page `ppa` holds, if any.
    #[inline]
    pub(crate) fn valid_lpn(&self, ppa: u32) -> Option<u64> {
        let lpn = self.rev[ppa as usize];
        (lpn != UNMAPPED && self.map[lpn as usize - 1] == ppa + 1).then(|| lpn as u64 - 1)
    }

    /// The LPN programmed at page `ppa` (stale or not), read from its spare area.
    #[inline]
    pub(crate) fn spare_lpn(&self, ppa: u32) -> u64 {
        let lpn = self.rev[ppa as usize];
        assert!(lpn != UNMAPPED, "page {ppa} was never programmed");
        lpn as u64 - 1
    }

    /// Plane (index) of block `b`.
    #[inline]
    pub(crate) fn plane_of(&self, b: u32) -> usize {
        (b / self.blocks_per_plane) as usize
    }

    /// First page of block `b`.
    #[inline]
    pub(crate) fn first_page(&self, b: u32) -> u32 {
        b * self.ppb
    }

    /// True if block `b` has no erased page left.
    #[inline]
    pub(crate) fn full(&self, b: u32) -> bool {
        let m = &self.blocks[b as usize];
        m.written == self.ppb && m.holes == 0
    }

    /// Pages of block `b` programmed now (valid or not).
    #[inline]
    pub(crate) fn programmed(&self, b: u32) -> u32 {
        let m = &self.blocks[b as usize];
        m.written - m.holes
    }

    /// True if page `ppa` is programmed (holds data, stale or not).
    #[inline]
    pub(crate) fn is_programmed(&self, ppa: u32) -> bool {
        ppa % self.ppb < self.blocks[(ppa / self.ppb) as usize].written && self.rev[ppa as usize] != UNMAPPED
    }

    /// Offset `lpn` of its logical block can be programmed in place in data block `d`
    /// (block-level mapping: page `k` holds offset `k` in a filled block): the block has
    /// room and every offset already in it is lower, since pages are programmed in order
    /// (NFTL and GFTL).
    pub(crate) fn fits_in_place(&self, d: u32, lpn: u64) -> bool {
        let w = self.blocks[d as usize].written;
        w == 0 || (w < self.ppb && self.spare_lpn(self.first_page(d) + w - 1) < lpn)
    }

    /// The first offset in `from .. ppb` of the logical block whose first LPN is `base`
    /// that has a current copy (what a merge copies next).
    pub(crate) fn next_mapped(&self, base: u64, from: u32) -> Option<u32> {
        (from..self.ppb).find(|&k| self.lookup(base + k as u64).is_some())
    }

    /// Free blocks of a plane.
    pub(crate) fn free_count(&self, plane: usize) -> u32 {
        let p = &self.pools[plane];
        (p.fifo.len() + p.heap.len()) as u32
    }

    /// Take a free block of `plane` (the least worn under wear levelling, else the one
    /// freed longest ago). Running out is a broken reserve: a bug.
    pub(crate) fn take_free(&mut self, plane: usize) -> u32 {
        let p = &mut self.pools[plane];
        let b = if self.wear_leveling { p.heap.pop().map(|k| k as u32) } else { p.fifo.pop_front() };
        let b = b.unwrap_or_else(|| panic!("plane {plane}: no free block; the merge reserve was violated"));
        let m = &mut self.blocks[b as usize];
        assert!(m.written == 0 && m.valid == 0, "free block {b} holds data");
        m.opened_seq = self.open_seq;
        self.open_seq += 1;
        b
    }

    /// Program the next page of block `b` with `lpn` (its previous copy, if any, must
    /// have been invalidated) and map `lpn` there.
    pub(crate) fn program(&mut self, b: u32, lpn: u64) -> u32 {
        let m = &mut self.blocks[b as usize];
        assert!(m.written < self.ppb, "block {b} is full");
        let ppa = b * self.ppb + m.written;
        m.written += 1;
        self.record_program(b, ppa, lpn)
    }

    /// Page `ppa` of block `b` now holds `lpn`: count it valid and map `lpn` there.
    fn record_program(&mut self, b: u32, ppa: u32, lpn: u64) -> u32 {
        self.blocks[b as usize].valid += 1;
        self.rev[ppa as usize] = lpn as u32 + 1;
        self.map[lpn as usize] = ppa + 1;
        self.moves.record(Lpn(lpn));
        let pool = &mut self.pools[(b / self.blocks_per_plane) as usize];
        pool.written += 1;
        pool.valid += 1;
        ppa
    }

    /// Program page `off` of block `b` with `lpn` (its previous copy must have been
    /// invalidated) and map `lpn` there: a hole a partial erase left below the write
    /// pointer, or the page at the pointer. The caller programs every erased range in
    /// order.
    pub(crate) fn program_at(&mut self, b: u32, off: u32, lpn: u64) -> u32 {
        let ppa = b * self.ppb + off;
        let m = &mut self.blocks[b as usize];
        if off == m.written {
            assert!(off < self.ppb, "block {b} is full");
            m.written += 1;
        } else {
            assert!(off < m.written && m.holes > 0, "page {off} of block {b} is not a hole");
            assert!(self.rev[ppa as usize] == UNMAPPED, "page {ppa} is programmed");
            m.holes -= 1;
        }
        self.record_program(b, ppa, lpn)
    }

    /// Mark the current copy of `lpn` stale and unmap it; returns its page.
    pub(crate) fn unmap(&mut self, lpn: u64) -> Option<u32> {
        let old = self.lookup(lpn)?;
        self.map[lpn as usize] = UNMAPPED;
        self.moves.record(Lpn(lpn));
        let b = old / self.ppb;
        self.blocks[b as usize].valid -= 1;
        self.pools[(b / self.blocks_per_plane) as usize].valid -= 1;
        Some(old)
    }

    /// A host write of `lpn` into block `b`: invalidate the old copy, program, count.
    pub(crate) fn host_program(&mut self, b: u32, lpn: u64) -> Ppa {
        self.unmap(lpn);
        self.stats.host_writes += 1;
        Ppa(self.program(b, lpn) as u64)
    }

    /// A GC move of the current copy of `lpn` into block `to`, as the step to report.
    pub(crate) fn move_page(&mut self, lpn: u64, to: u32) -> GcStep {
        let from = self.unmap(lpn).expect("a GC move of an unmapped LPN");
        let dest = self.program(to, lpn);
        self.move_step(lpn, from, dest)
    }

    /// A GC move of the current copy of `lpn` into page `off` of block `to`, a hole a
    /// partial erase left ([`Flash::program_at`]).
    pub(crate) fn move_page_at(&mut self, lpn: u64, to: u32, off: u32) -> GcStep {
        let from = self.unmap(lpn).expect("a GC move of an unmapped LPN");
        let dest = self.program_at(to, off, lpn);
        self.move_step(lpn, from, dest)
    }

    /// Count a move from page `from` to page `dest` and describe it.
    fn move_step(&mut self, lpn: u64, from: u32, dest: u32) -> GcStep {
        self.stats.gc_moves += 1;
        let copyback = self.copyback && self.plane_of(from / self.ppb) == self.plane_of(dest / self.ppb);
        self.stats.gc_copybacks += copyback as u64;
        GcStep::Move {
            lpn: Lpn(lpn),
            from: Ppa(from as u64),
            to: Ppa(dest as u64),
            copyback,
            batch_with_next: false,
        }
    }

    /// Partially erase pages `first .. first + len` of block `b`; none of them may hold
    /// valid data (a broken plan otherwise). Programmed pages below the write pointer
    /// become holes that [`Flash::program_at`] refills in order; if the range reaches the
    /// pointer, the pointer moves back to `first` instead. Counts the erase in
    /// [`FtlStats::partial_erases`] (by level too); the block's erase count is for whole
    /// erases only.
    pub(crate) fn partial_erase(&mut self, b: u32, first: u32, len: u32) -> GcStep {
        let base = b * self.ppb;
        let end = (first + len).min(self.blocks[b as usize].written).max(first);
        let mut cleared = 0;
        for ppa in base + first..base + end {
            assert!(self.valid_lpn(ppa).is_none(), "partial erase of block {b}: page {ppa} holds valid data");
            if self.is_programmed(ppa) {
                self.rev[ppa as usize] = UNMAPPED;
                cleared += 1;
            }
        }
        let m = &mut self.blocks[b as usize];
        if first + len >= m.written {
            m.holes -= (end - first) - cleared; // earlier holes of the range: now above the pointer
            m.written = m.written.min(first);
        } else {
            m.holes += cleared;
        }
        let plane = self.plane_of(b);
        self.pools[plane].written -= cleared as u64;
        self.stats.partial_erases += 1;
        let level = (self.ppb / len).trailing_zeros() as usize;
        self.stats.pen_partial_erases_by_level[level.min(16)] += 1;
        GcStep::PartialErase { block: BlockId(b), range: PageRange { first_page: first, page_count: len } }
    }

    /// Erase block `b` (it must hold no valid page) and return it to its plane's pool.
    pub(crate) fn erase(&mut self, b: u32) -> GcStep {
        let plane = self.plane_of(b);
        let m = &mut self.blocks[b as usize];
        assert_eq!(m.valid, 0, "erasing block {b} with valid data");
        let written = (m.written - m.holes) as u64;
        m.written = 0;
        m.holes = 0;
        m.erase_count += 1;
        let key = (m.erase_count as u64) << 32 | b as u64;
        let pool = &mut self.pools[plane];
        pool.written -= written;
        if self.wear_leveling {
            pool.heap.push(key);
        } else {
            pool.fifo.push_back(b);
        }
        self.stats.erases += 1;
        GcStep::Erase { block: BlockId(b), batch_with_next: false }
    }

    /// The configured tie-break between two candidate victim blocks: `a` beats `b`.
    pub(crate) fn tie_beats(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.blocks[a as usize], &self.blocks[b as usize]);
        match self.tie_break {
            TieBreak::LowestId => a < b,
            TieBreak::Oldest => x.opened_seq < y.opened_seq,
            TieBreak::LeastWorn => (x.erase_count, a) < (y.erase_count, b),
        }
    }

    /// [`crate::Ftl::page_counts`].
    pub(crate) fn page_counts(&self, plane: PlaneId) -> PageCounts {
        let p = &self.pools[self.check_plane(plane)];
        let total = self.blocks_per_plane as u64 * self.ppb as u64;
        PageCounts { free: total - p.written, valid: p.valid, invalid: p.written - p.valid }
    }

    /// [`crate::Ftl::page_lpn`].
    pub(crate) fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
        assert!(ppa.0 < self.rev.len() as u64, "ppa {} out of range", ppa.0);
        self.valid_lpn(ppa.0 as u32).map(Lpn)
    }

    /// [`crate::Ftl::block_info`].
    pub(crate) fn block_info(&self, block: BlockId) -> BlockInfo {
        let m = &self.blocks[block.idx()];
        BlockInfo { programmed: m.written - m.holes, valid: m.valid, erase_count: m.erase_count }
    }

    /// The plane index, checked.
    #[inline]
    pub(crate) fn check_plane(&self, plane: PlaneId) -> usize {
        assert!(plane.0 < self.geometry.total_planes(), "plane {} out of range", plane.0);
        plane.idx()
    }
}

/// PEN's state shared by the block-level FTLs (`ftl.pen = true`): the settings, a wear
/// gate per merge unit (NFTL: logical block, superblock FTL: superblock) and a
/// disturbance state per block slot (NFTL: the logical block's D-block, superblock FTL:
/// the physical block), allocated on the slot's first M-Merge.
#[derive(Clone, Debug)]
pub(crate) struct PenState {
    pub(crate) s: PenSettings,
    pub(crate) gates: Vec<WearGate>,
    disturb: Vec<Option<Box<DisturbState>>>,
    clean: DisturbState,
}

impl PenState {
    pub(crate) fn new(s: PenSettings, units: usize, slots: usize) -> PenState {
        PenState {
            gates: vec![WearGate::new(s.wear_limit); units],
            disturb: vec![None; slots],
            clean: s.fresh_disturb_state(),
            s,
        }
    }

    /// The disturbance of slot `i`.
    pub(crate) fn disturb(&self, i: usize) -> &DisturbState {
        self.disturb[i].as_deref().unwrap_or(&self.clean)
    }

    /// Slot `i` was M-Merged, restoring `restored`.
    pub(crate) fn record_m_merge(&mut self, i: usize, restored: &[Pb]) {
        let state = self.disturb[i].get_or_insert_with(|| Box::new(self.clean.clone()));
        state.record_m_merge(restored).expect("restored PBs are in the tree");
    }

    /// Slot `i` holds a freshly erased block.
    pub(crate) fn reset(&mut self, i: usize) {
        self.disturb[i] = None;
    }
}

/// The write gate shared by the block-level FTLs: host writes to a plane wait while a
/// merge/GC job runs there or one is due (`busy`), and while the plane has fewer than two
/// free blocks — a write may take one block, and one must stay for the next merge's
/// destination. Plane-level on purpose: [`crate::Ftl::can_write`] cannot see the LPN.
pub(crate) fn write_gate(busy: bool, free_blocks: u32, plane: PlaneId) -> Result<(), FtlError> {
    if busy {
        Err(FtlError::MergeNeeded { plane })
    } else if free_blocks < 2 {
        Err(FtlError::NoFreePage { plane })
    } else {
        Ok(())
    }
}

/// The state every block-level FTL keeps besides its mapping scheme: the flash, the
/// validated config, and per plane the units (logical blocks, superblocks) whose merge
/// or GC is due before any further write there.
#[derive(Clone, Debug)]
pub(crate) struct Core {
    pub(crate) flash: Flash,
    pub(crate) cfg: ValidatedFtlConfig,
    /// Per plane: units due for a merge/GC, oldest first (at most one: writes wait while
    /// one is due).
    pub(crate) due: Vec<VecDeque<u32>>,
}

impl Core {
    pub(crate) fn new(geometry: Geometry, cfg: ValidatedFtlConfig) -> Core {
        let planes = geometry.total_planes() as usize;
        Core { flash: Flash::new(geometry, &cfg), cfg, due: vec![VecDeque::new(); planes] }
    }

    /// [`crate::Ftl::needs_gc`]: a merge is due, or the free pool is below the threshold.
    pub(crate) fn needs_gc(&self, pi: usize) -> bool {
        !self.due[pi].is_empty() || self.flash.free_count(pi) < self.cfg.gc_threshold_blocks()
    }

    /// The write gate of plane `pi` ([`write_gate`]), `running` telling whether a job runs.
    pub(crate) fn gate(&self, pi: usize, running: bool) -> Result<(), FtlError> {
        let busy = running || !self.due[pi].is_empty();
        write_gate(busy, self.flash.free_count(pi), PlaneId(pi as u32))
    }
}

/// The [`crate::Ftl`] methods the block-level FTLs share, for an `impl Ftl` block of a
/// type with a `core: Core` field and the inherent methods `unit_plane(&self, lpn: u64)
/// -> PlaneId`, `job_running(&self, pi: usize) -> bool`, `host_write(&mut self, lpn: u64,
/// pi: usize) -> Ppa` (a write the gate let through) and `job_step(&mut self, pi: usize)
/// -> GcStep` (the next step of the running job). `block_ftl_common!(own_gc_trigger)`
/// leaves out `needs_gc` for an FTL with its own GC trigger (GFTL).
macro_rules! block_ftl_common {
    () => {
        $crate::blocks::block_ftl_common!(own_gc_trigger);

        fn needs_gc(&self, plane: PlaneId) -> bool {
            self.core.needs_gc(self.core.flash.check_plane(plane))
        }
    };
    // GFTL decides itself when GC is due (its partial-GC credit): everything but
    // `needs_gc`.
    (own_gc_trigger) => {
        fn geometry(&self) -> &Geometry {
            &self.core.flash.geometry
        }

        fn logical_pages(&self) -> u64 {
            self.core.flash.logical_pages()
        }

        fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
            self.core.flash.lookup(lpn.0).map(|p| Ppa(p as u64))
        }

        fn static_plane(&self, lpn: Lpn) -> PlaneId {
            self.unit_plane(lpn.0)
        }

        /// Always [`WriteConstraint::Plane`]: the plane of the LPN's unit.
        fn write_constraint(&self, lpn: Lpn) -> WriteConstraint {
            WriteConstraint::Plane(self.unit_plane(lpn.0))
        }

        fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
            assert!(lpn.0 < self.logical_pages(), "{lpn} out of range");
            let pi = self.core.flash.check_plane(plane);
            assert_eq!(plane, self.unit_plane(lpn.0), "{lpn} written to a plane its unit is not on");
            if let Err(e) = self.core.gate(pi, self.job_running(pi)) {
                self.core.flash.stats.host_writes_refused += 1;
                return Err(e);
            }
            Ok(self.host_write(lpn.0, pi))
        }

        fn log_moves(&mut self) -> bool {
            self.core.flash.moves.enable();
            true
        }

        fn take_moves(&mut self, out: &mut Vec<Lpn>) -> bool {
            self.core.flash.moves.take_if_enabled(out)
        }

        fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
            let old = self.core.flash.unmap(lpn.0)?;
            self.core.flash.stats.trims += 1;
            Some(Ppa(old as u64))
        }

        fn gc_in_progress(&self, plane: PlaneId) -> bool {
            self.job_running(self.core.flash.check_plane(plane))
        }

        fn gc_step(&mut self, plane: PlaneId) -> GcStep {
            let pi = self.core.flash.check_plane(plane);
            if self.job_running(pi) { self.job_step(pi) } else { GcStep::Done }
        }

        fn free_blocks(&self, plane: PlaneId) -> u32 {
            self.core.flash.free_count(self.core.flash.check_plane(plane))
        }

        fn page_counts(&self, plane: PlaneId) -> PageCounts {
            self.core.flash.page_counts(plane)
        }

        fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
            self.core.flash.page_lpn(ppa)
        }

        fn block_info(&self, block: BlockId) -> BlockInfo {
            self.core.flash.block_info(block)
        }

        fn stats(&self) -> FtlStats {
            self.core.flash.stats
        }

        fn can_write(&self, plane: PlaneId) -> bool {
            let pi = self.core.flash.check_plane(plane);
            self.core.gate(pi, self.job_running(pi)).is_ok()
        }

        /// Relative: `waf_epsilon × WAF` (0.02 → windows within 2 % of each other).
        fn steady_waf_tolerance_ppm(&self, epsilon_ppm: u64, waf_ppm: u64) -> u64 {
            (epsilon_ppm as u128 * waf_ppm as u128 / 1_000_000) as u64
        }
    };
}
pub(crate) use block_ftl_common;

/// Unit tests: start one GC job on `plane` (it must start) and run it to its end; its
/// steps.
#[cfg(test)]
pub(crate) fn run_one_job<F: crate::Ftl>(ftl: &mut F, plane: PlaneId) -> Vec<GcStep> {
    ftl.gc_begin(plane).expect("a job starts");
    let mut steps = Vec::new();
    loop {
        match ftl.gc_step(plane) {
            GcStep::Done => return steps,
            s => steps.push(s),
        }
    }
}
