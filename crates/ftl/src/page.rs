//! The page-mapping baseline FTL: every LPN maps to any page of the device.
//!
//! * Allocation: one open ("active") block per plane; a write takes its next page. The
//!   plane comes from the caller (static striping via [`Ftl::static_plane`], or any plane
//!   a dynamic allocator picks).
//! * GC per plane, triggered when the plane's free blocks drop below the threshold;
//!   greedy victim (most invalid pages among full blocks, deterministic tie-break); valid
//!   pages are moved into the plane's active block (optionally flagged as copyback), then
//!   the victim is erased.
//! * Dynamic wear levelling: a new active block is the least-erased free block of the
//!   plane.
//!
//! # Reserve (why GC always finishes)
//!
//! Host writes to a plane are refused ([`FtlError::NoFreePage`]) unless, after the write,
//! the plane keeps at least `pages_per_block + v` free pages, where `v` is the number of
//! valid pages the plane's running GC job still has to move (0 without a job). A job's
//! victim has at least one invalid page, so it needs at most `pages_per_block − 1`
//! destination pages; each move consumes one free page and removes one page from `v`, so
//! the invariant *free pages ≥ v* holds throughout the job however host writes interleave.
//! With the GC threshold ≥ 2 blocks, a plane with 2 or more free blocks never refuses a
//! host write, so a refusal implies `needs_gc`.
//!
//! # Memory
//!
//! The forward map is a table of 4096-entry chunks of `u32` allocated on first write to
//! the chunk; the reverse map (page → LPN) is one `u32` per page, allocated when a block
//! is opened and recycled through a pool when it is erased. There is no validity bitmap:
//! a page is valid iff the forward-map entry of the LPN its reverse entry names points
//! back to it; per-block valid counters are kept alongside (the conformance harness
//! checks that both agree). Per-block metadata is 32
//! bytes. Victim selection uses per-plane buckets of full blocks indexed by invalid count
//! (intrusive doubly linked lists), so a GC scans only the blocks tied for the maximum.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts};
use crate::config::{FtlConfig, FtlConfigError, TieBreak, ValidatedFtlConfig};

/// "No block" in block links and the active-block slot.
const NONE: u32 = u32::MAX;
/// Unmapped forward-map entry / invalid reverse-map entry.
const UNMAPPED: u32 = u32::MAX;
const CHUNK_BITS: u32 = 12;
const CHUNK: usize = 1 << CHUNK_BITS;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockState {
    Free,
    Open,
    Closed,
    Victim,
}

#[derive(Clone, Copy, Debug)]
struct BlockMeta {
    /// Pages programmed since the last erase.
    written: u32,
    valid: u32,
    erase_count: u32,
    state: BlockState,
    /// Links of the invalid-count bucket list (closed blocks only).
    prev: u32,
    next: u32,
    /// When the block was closed (for the `oldest` tie-break).
    closed_seq: u64,
}

#[derive(Clone, Copy, Debug)]
struct GcState {
    victim: u32,
    next_page: u32,
    erased: bool,
}

#[derive(Debug)]
struct PlaneState {
    active: u32,
    /// Free blocks, FIFO (wear levelling off).
    fifo: VecDeque<u32>,
    /// Free blocks keyed by `erase_count << 32 | block` (wear levelling on).
    heap: BinaryHeap<Reverse<u64>>,
    /// No closed block of the plane has more invalid pages than this.
    max_invalid: u32,
    gc: Option<GcState>,
    valid: u64,
}

/// Page-level mapping FTL. See the [module docs](self).
#[derive(Debug)]
pub struct PageFtl {
    geometry: Geometry,
    cfg: ValidatedFtlConfig,
    ppb: u32,
    blocks_per_plane: u32,
    /// Static plane of `lpn` = `static_planes[lpn % total_planes]`.
    static_planes: Box<[PlaneId]>,
    map: Vec<Option<Box<[u32]>>>,
    rev: Vec<Option<Box<[u32]>>>,
    rev_pool: Vec<Box<[u32]>>,
    blocks: Vec<BlockMeta>,
    planes: Vec<PlaneState>,
    /// Heads of the invalid-count buckets, `plane × (ppb + 1) + invalid`.
    bucket_heads: Vec<u32>,
    close_seq: u64,
    stats: FtlStats,
}

impl PageFtl {
    /// Build the FTL for `geometry`, validating `config` against it.
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<PageFtl, FtlConfigError> {
        let cfg = config.validate(&geometry)?;
        Ok(PageFtl::from_validated(geometry, cfg))
    }

    /// Build the FTL from a configuration already validated against `geometry` (panics
    /// if it was validated against another geometry: a caller bug).
    pub fn from_validated(geometry: Geometry, cfg: ValidatedFtlConfig) -> PageFtl {
        assert_eq!(
            cfg.config.validate(&geometry).as_ref(),
            Ok(&cfg),
            "config validated for another geometry"
        );
        assert!(geometry.total_pages() < u32::MAX as u64, "32-bit page tables");
        let ppb = geometry.pages_per_block();
        let blocks_per_plane = geometry.blocks_per_plane();
        let planes_n = geometry.total_planes();
        let static_planes = (0..planes_n as u64)
            .map(|r| cfg.config.striping_order.plane_of(&geometry, r))
            .collect::<Vec<_>>()
            .into_boxed_slice();
        let wl = cfg.config.wear_leveling;
        let planes = (0..planes_n)
            .map(|p| {
                let first = p * blocks_per_plane;
                let ids = first..first + blocks_per_plane;
                PlaneState {
                    active: NONE,
                    fifo: if wl { VecDeque::new() } else { ids.clone().collect() },
                    heap: if wl { ids.map(|b| Reverse(b as u64)).collect() } else { BinaryHeap::new() },
                    max_invalid: 0,
                    gc: None,
                    valid: 0,
                }
            })
            .collect();
        let blocks = vec![
            BlockMeta {
                written: 0,
                valid: 0,
                erase_count: 0,
                state: BlockState::Free,
                prev: NONE,
                next: NONE,
                closed_seq: 0,
            };
            geometry.total_blocks() as usize
        ];
        let chunks = cfg.logical_pages.div_ceil(CHUNK as u64) as usize;
        PageFtl {
            ppb,
            blocks_per_plane,
            static_planes,
            map: (0..chunks).map(|_| None).collect(),
            rev: (0..geometry.total_blocks()).map(|_| None).collect(),
            rev_pool: Vec::new(),
            blocks,
            planes,
            bucket_heads: vec![NONE; planes_n as usize * (ppb as usize + 1)],
            close_seq: 0,
            stats: FtlStats::default(),
            geometry,
            cfg,
        }
    }

    /// The validated configuration.
    pub fn config(&self) -> &ValidatedFtlConfig {
        &self.cfg
    }

    /// `(min, max)` erase count over all blocks (a wear-levelling summary).
    pub fn erase_count_range(&self) -> (u32, u32) {
        self.blocks.iter().fold((u32::MAX, 0), |(lo, hi), b| (lo.min(b.erase_count), hi.max(b.erase_count)))
    }

    #[inline]
    fn map_get(&self, lpn: u64) -> u32 {
        match &self.map[(lpn >> CHUNK_BITS) as usize] {
            Some(chunk) => chunk[lpn as usize & (CHUNK - 1)],
            None => UNMAPPED,
        }
    }

    #[inline]
    fn map_set(&mut self, lpn: u64, ppa: u32) {
        let chunk = self.map[(lpn >> CHUNK_BITS) as usize]
            .get_or_insert_with(|| vec![UNMAPPED; CHUNK].into_boxed_slice());
        chunk[lpn as usize & (CHUNK - 1)] = ppa;
    }

    #[inline]
    fn plane_of_block(&self, b: u32) -> usize {
        self.geometry.plane_of_block(BlockId(b)).idx()
    }

    fn free_count(&self, plane: usize) -> u32 {
        let p = &self.planes[plane];
        (p.fifo.len() + p.heap.len()) as u32
    }

    /// Free pages of a plane: rest of the active block plus the free blocks.
    fn room(&self, plane: usize) -> u64 {
        let p = &self.planes[plane];
        let active_rest =
            if p.active == NONE { 0 } else { self.ppb - self.blocks[p.active as usize].written };
        active_rest as u64 + self.free_count(plane) as u64 * self.ppb as u64
    }

    fn head_index(&self, plane: usize, invalid: u32) -> usize {
        plane * (self.ppb as usize + 1) + invalid as usize
    }

    fn bucket_insert(&mut self, b: u32, invalid: u32) {
        let plane = self.plane_of_block(b);
        let h = self.head_index(plane, invalid);
        let head = self.bucket_heads[h];
        let m = &mut self.blocks[b as usize];
        m.prev = NONE;
        m.next = head;
        if head != NONE {
            self.blocks[head as usize].prev = b;
        }
        self.bucket_heads[h] = b;
        let p = &mut self.planes[plane];
        p.max_invalid = p.max_invalid.max(invalid);
    }

    fn bucket_remove(&mut self, b: u32, invalid: u32) {
        let BlockMeta { prev, next, .. } = self.blocks[b as usize];
        if prev == NONE {
            let h = self.head_index(self.plane_of_block(b), invalid);
            assert_eq!(self.bucket_heads[h], b, "bucket list corrupt");
            self.bucket_heads[h] = next;
        } else {
            self.blocks[prev as usize].next = next;
        }
        if next != NONE {
            self.blocks[next as usize].prev = prev;
        }
    }

    fn pop_free(&mut self, plane: usize) -> Option<u32> {
        let p = &mut self.planes[plane];
        if self.cfg.config.wear_leveling {
            p.heap.pop().map(|Reverse(key)| key as u32)
        } else {
            p.fifo.pop_front()
        }
    }

    fn push_free(&mut self, b: u32) {
        let plane = self.plane_of_block(b);
        let key = (self.blocks[b as usize].erase_count as u64) << 32 | b as u64;
        let p = &mut self.planes[plane];
        if self.cfg.config.wear_leveling {
            p.heap.push(Reverse(key));
        } else {
            p.fifo.push_back(b);
        }
    }

    /// Program the next page of the plane's active block with `lpn` (opening a new block
    /// if needed, closing it when full) and return the page. Does not touch the forward map.
    fn program(&mut self, plane: usize, lpn: u64) -> u32 {
        let mut b = self.planes[plane].active;
        if b == NONE {
            b = self
                .pop_free(plane)
                .expect("page FTL: no free block for a program; the GC reserve was violated");
            let m = &mut self.blocks[b as usize];
            assert!(m.state == BlockState::Free && m.written == 0 && m.valid == 0);
            m.state = BlockState::Open;
            let ppb = self.ppb as usize;
            let mut r = self.rev_pool.pop().unwrap_or_else(|| vec![UNMAPPED; ppb].into_boxed_slice());
            r.fill(UNMAPPED);
            self.rev[b as usize] = Some(r);
            self.planes[plane].active = b;
        }
        let m = &mut self.blocks[b as usize];
        let off = m.written;
        m.written += 1;
        m.valid += 1;
        let full = m.written == self.ppb;
        self.rev[b as usize].as_mut().expect("open block has a reverse map")[off as usize] = lpn as u32;
        self.planes[plane].valid += 1;
        if full {
            let m = &mut self.blocks[b as usize];
            m.state = BlockState::Closed;
            m.closed_seq = self.close_seq;
            self.close_seq += 1;
            let invalid = self.ppb - m.valid;
            self.planes[plane].active = NONE;
            self.bucket_insert(b, invalid);
        }
        b * self.ppb + off
    }

    /// The LPN whose current copy is page `off` of block `b`, if any. A page is valid iff
    /// its reverse-map entry names an LPN whose forward-map entry points back to it, so
    /// invalidating a page never has to touch the reverse map (a cache miss saved per
    /// overwrite).
    #[inline]
    fn valid_lpn(&self, b: u32, off: u32) -> Option<u32> {
        let lpn = self.rev[b as usize].as_ref()?[off as usize];
        (lpn != UNMAPPED && self.map_get(lpn as u64) == b * self.ppb + off).then_some(lpn)
    }

    /// Account for page `ppa` (the current copy of some LPN) becoming stale; the caller
    /// repoints or clears the forward-map entry right after.
    fn invalidate(&mut self, ppa: u32) {
        let b = self.geometry.block_of(Ppa(ppa as u64)).0;
        let plane = self.plane_of_block(b);
        self.planes[plane].valid -= 1;
        let m = &mut self.blocks[b as usize];
        let old_invalid = m.written - m.valid;
        m.valid -= 1;
        if m.state == BlockState::Closed {
            self.bucket_remove(b, old_invalid);
            self.bucket_insert(b, old_invalid + 1);
        }
    }

    fn select_victim(&mut self, plane: usize) -> Option<u32> {
        let mut k = self.planes[plane].max_invalid;
        while k > 0 && self.bucket_heads[self.head_index(plane, k)] == NONE {
            k -= 1;
        }
        self.planes[plane].max_invalid = k;
        if k == 0 {
            return None;
        }
        let mut best = self.bucket_heads[self.head_index(plane, k)];
        let mut cur = self.blocks[best as usize].next;
        while cur != NONE {
            let (c, b) = (&self.blocks[cur as usize], &self.blocks[best as usize]);
            let better = match self.cfg.config.victim_tie_break {
                TieBreak::LowestId => cur < best,
                TieBreak::Oldest => c.closed_seq < b.closed_seq,
                TieBreak::LeastWorn => (c.erase_count, cur) < (b.erase_count, best),
            };
            if better {
                best = cur;
            }
            cur = c.next;
        }
        Some(best)
    }

    /// Read the forward-map entries of the victim's valid pages in one tight loop. Each
    /// GC move updates the entry of a random LPN — a cache miss when the map is large —
    /// and one move per `gc_step` call serialises those misses; independent loads in a
    /// loop overlap them, and the moves then hit in cache. Purely a speed hint (measured:
    /// 1.75× on preconditioning a 256 GiB device of 8 KiB pages); the value is discarded.
    fn warm_map_entries(&self, victim: u32) {
        let rev = self.rev[victim as usize].as_ref().expect("victim has a reverse map");
        let mut acc = 0u32;
        for &lpn in rev.iter() {
            if lpn != UNMAPPED {
                acc ^= self.map_get(lpn as u64);
            }
        }
        std::hint::black_box(acc);
    }

    fn erase(&mut self, b: u32) {
        let m = &mut self.blocks[b as usize];
        assert!(m.state == BlockState::Victim && m.valid == 0, "erasing block {b} with valid data");
        m.state = BlockState::Free;
        m.written = 0;
        m.erase_count += 1;
        let r = self.rev[b as usize].take().expect("victim has a reverse map");
        self.rev_pool.push(r);
        self.push_free(b);
        self.stats.erases += 1;
    }

    #[inline]
    fn check_plane(&self, plane: PlaneId) -> usize {
        assert!(plane.0 < self.geometry.total_planes(), "plane {} out of range", plane.0);
        plane.idx()
    }
}

impl Ftl for PageFtl {
    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        let p = &self.planes[plane.idx()];
        if p.active == NONE {
            Some(0)
        } else {
            let w = self.blocks[p.active as usize].written;
            Some(if w >= self.ppb { 0 } else { w })
        }
    }

    fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    fn logical_pages(&self) -> u64 {
        self.cfg.logical_pages
    }

    #[inline]
    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        let p = self.map_get(lpn.0);
        (p != UNMAPPED).then_some(Ppa(p as u64))
    }

    #[inline]
    fn static_plane(&self, lpn: Lpn) -> PlaneId {
        let n = self.static_planes.len() as u64;
        // A mask when the plane count is a power of two (a division otherwise).
        let i = if n.is_power_of_two() { lpn.0 & (n - 1) } else { lpn.0 % n };
        self.static_planes[i as usize]
    }

    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        let pi = self.check_plane(plane);
        let pending = match self.planes[pi].gc {
            Some(GcState { victim, erased: false, .. }) => self.blocks[victim as usize].valid as u64,
            _ => 0,
        };
        if self.room(pi) <= self.ppb as u64 + pending {
            self.stats.host_writes_refused += 1;
            return Err(FtlError::NoFreePage { plane });
        }
        let old = self.map_get(lpn.0);
        if old != UNMAPPED {
            self.invalidate(old);
        }
        let ppa = self.program(pi, lpn.0);
        self.map_set(lpn.0, ppa);
        self.stats.host_writes += 1;
        Ok(Ppa(ppa as u64))
    }

    fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        let old = self.map_get(lpn.0);
        if old == UNMAPPED {
            return None;
        }
        self.invalidate(old);
        self.map_set(lpn.0, UNMAPPED);
        self.stats.trims += 1;
        Some(Ppa(old as u64))
    }

    #[inline]
    fn needs_gc(&self, plane: PlaneId) -> bool {
        self.free_count(self.check_plane(plane)) < self.cfg.gc_threshold_blocks
    }

    fn gc_in_progress(&self, plane: PlaneId) -> bool {
        self.planes[self.check_plane(plane)].gc.is_some()
    }

    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let pi = self.check_plane(plane);
        assert!(self.planes[pi].gc.is_none(), "gc_begin on plane {} while a job is in progress", plane.0);
        let v = self.select_victim(pi)?;
        let m = self.blocks[v as usize];
        assert_eq!(m.state, BlockState::Closed);
        let invalid = m.written - m.valid;
        self.bucket_remove(v, invalid);
        self.blocks[v as usize].state = BlockState::Victim;
        assert!(self.room(pi) >= m.valid as u64, "GC reserve violated on plane {}", plane.0);
        self.warm_map_entries(v);
        self.planes[pi].gc = Some(GcState { victim: v, next_page: 0, erased: false });
        self.stats.gc_jobs += 1;
        Some(GcJob { victim: BlockId(v), valid_pages: m.valid, invalid_pages: invalid })
    }

    fn gc_step(&mut self, plane: PlaneId) -> GcStep {
        let pi = self.check_plane(plane);
        let Some(job) = self.planes[pi].gc else {
            return GcStep::Done;
        };
        if job.erased {
            self.planes[pi].gc = None;
            return GcStep::Done;
        }
        let v = job.victim;
        let found = (job.next_page..self.ppb).find_map(|o| Some((o, self.valid_lpn(v, o)?)));
        match found {
            Some((off, lpn)) => {
                let lpn = lpn as u64;
                let from = v * self.ppb + off;
                self.invalidate(from);
                let to = self.program(pi, lpn);
                self.map_set(lpn, to);
                self.planes[pi].gc = Some(GcState { next_page: off + 1, ..job });
                let copyback = self.cfg.config.copyback;
                self.stats.gc_moves += 1;
                self.stats.gc_copybacks += copyback as u64;
                GcStep::Move {
                    lpn: Lpn(lpn),
                    from: Ppa(from as u64),
                    to: Ppa(to as u64),
                    copyback,
                    batch_with_next: false,
                }
            }
            None => {
                self.erase(v);
                self.planes[pi].gc = Some(GcState { erased: true, ..job });
                GcStep::Erase { block: BlockId(v) }
            }
        }
    }

    fn free_blocks(&self, plane: PlaneId) -> u32 {
        self.free_count(self.check_plane(plane))
    }

    fn page_counts(&self, plane: PlaneId) -> PageCounts {
        let pi = self.check_plane(plane);
        let total = self.blocks_per_plane as u64 * self.ppb as u64;
        let free = self.room(pi);
        let valid = self.planes[pi].valid;
        PageCounts { free, valid, invalid: total - free - valid }
    }

    fn page_lpn(&self, ppa: Ppa) -> Option<Lpn> {
        assert!(ppa.0 < self.geometry.total_pages(), "ppa {} out of range", ppa.0);
        let b = (ppa.0 / self.ppb as u64) as u32;
        let off = (ppa.0 % self.ppb as u64) as u32;
        self.valid_lpn(b, off).map(|l| Lpn(l as u64))
    }

    fn block_info(&self, block: BlockId) -> BlockInfo {
        let m = &self.blocks[block.idx()];
        BlockInfo { programmed: m.written, valid: m.valid, erase_count: m.erase_count }
    }

    fn stats(&self) -> FtlStats {
        self.stats
    }
}

impl PageFtl {
    /// Approximate heap bytes held by the FTL's tables (forward-map chunks, reverse maps
    /// in use or pooled, block and plane metadata). For memory reports.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let chunks = self.map.iter().filter(|c| c.is_some()).count();
        let revs = self.rev.iter().filter(|r| r.is_some()).count() + self.rev_pool.len();
        chunks * CHUNK * 4
            + self.map.len() * size_of::<Option<Box<[u32]>>>()
            + revs * self.ppb as usize * 4
            + self.rev.len() * size_of::<Option<Box<[u32]>>>()
            + self.blocks.len() * size_of::<BlockMeta>()
            + self.bucket_heads.len() * 4
            + self.planes.iter().map(|p| p.heap.capacity() * 8 + p.fifo.capacity() * 4).sum::<usize>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{GcThreshold, StripeOrder};

    fn geo(ch: u32, ways: u32, dies: u32, planes: u32, blocks: u32, pages: u32) -> Geometry {
        crate::testing::slc_geometry(ch, ways, dies, planes, blocks, pages)
    }

    fn cfg(tie: TieBreak, wl: bool) -> FtlConfig {
        FtlConfig {
            overprovisioning: 0.5,
            gc_threshold: GcThreshold::FreeBlocks(2),
            victim_tie_break: tie,
            wear_leveling: wl,
            ..FtlConfig::default()
        }
    }

    /// Run a whole GC job, returning its steps.
    fn gc(ftl: &mut PageFtl, plane: PlaneId) -> Vec<GcStep> {
        let mut steps = Vec::new();
        loop {
            match ftl.gc_step(plane) {
                GcStep::Done => return steps,
                s => steps.push(s),
            }
        }
    }

    #[test]
    fn greedy_gc_moves_valid_pages_then_erases_the_fullest_block() {
        // One plane, 8 blocks × 4 pages, 16 logical pages.
        let mut ftl = PageFtl::new(geo(1, 1, 1, 1, 8, 4), &cfg(TieBreak::LowestId, true)).unwrap();
        let p = PlaneId(0);
        for l in 0..12 {
            ftl.write(Lpn(l), p).unwrap(); // blocks 0, 1, 2 full
        }
        // Block 1 (LPNs 4..8): 3 invalid; block 0: 1 invalid.
        for l in [4, 5, 6, 0] {
            ftl.write(Lpn(l), p).unwrap();
        }
        let job = ftl.gc_begin(p).unwrap();
        assert_eq!(job, GcJob { victim: BlockId(1), valid_pages: 1, invalid_pages: 3 });
        assert!(ftl.gc_in_progress(p));
        let steps = gc(&mut ftl, p);
        assert_eq!(
            steps,
            [
                GcStep::Move {
                    lpn: Lpn(7),
                    from: Ppa(7),
                    to: Ppa(16),
                    copyback: false,
                    batch_with_next: false
                },
                GcStep::Erase { block: BlockId(1) },
            ]
        );
        assert!(!ftl.gc_in_progress(p));
        assert_eq!(ftl.lookup(Lpn(7)), Some(Ppa(16)));
        assert_eq!(ftl.block_info(BlockId(1)), BlockInfo { programmed: 0, valid: 0, erase_count: 1 });
        assert_eq!(ftl.stats().gc_moves, 1);
        assert_eq!(ftl.stats().erases, 1);
        // Next victim: block 0 (1 invalid) — blocks 2 and 3 hold no invalid page.
        assert_eq!(ftl.gc_begin(p).unwrap().victim, BlockId(0));
    }

    #[test]
    fn tie_breaks_choose_deterministically() {
        // Blocks 0, 1, 2 each get exactly one invalid page; block 0 was erased once before.
        let setup = |tie| {
            let mut ftl = PageFtl::new(geo(1, 1, 1, 1, 8, 2), &cfg(tie, false)).unwrap();
            let p = PlaneId(0);
            ftl.write(Lpn(0), p).unwrap();
            ftl.write(Lpn(0), p).unwrap(); // block 0 fully invalid after the next write
            ftl.write(Lpn(0), p).unwrap();
            assert_eq!(ftl.gc_begin(p).unwrap().victim, BlockId(0));
            gc(&mut ftl, p);
            // Free FIFO (wear levelling off): blocks 2..8 then 0. Block 1 is active.
            for l in 1..6 {
                ftl.write(Lpn(l), p).unwrap();
            } // block 1: [0, 1], block 2: [2, 3], block 3: [4, 5]
            for l in [5, 3, 1] {
                ftl.trim(Lpn(l));
            }
            ftl
        };
        let mut ftl = setup(TieBreak::LowestId);
        assert_eq!(ftl.gc_begin(PlaneId(0)).unwrap().victim, BlockId(1));
        let mut ftl = setup(TieBreak::Oldest);
        assert_eq!(ftl.gc_begin(PlaneId(0)).unwrap().victim, BlockId(1));
        let mut ftl = setup(TieBreak::LeastWorn);
        assert_eq!(ftl.gc_begin(PlaneId(0)).unwrap().victim, BlockId(1));
        // Make block 1 the most worn: least-worn now prefers block 2, lowest-id still 1.
        let mut ftl = setup(TieBreak::LeastWorn);
        ftl.blocks[1].erase_count = 5;
        assert_eq!(ftl.gc_begin(PlaneId(0)).unwrap().victim, BlockId(2));
        let mut ftl = setup(TieBreak::Oldest);
        ftl.blocks[1].closed_seq = 99;
        assert_eq!(ftl.gc_begin(PlaneId(0)).unwrap().victim, BlockId(2));
    }

    #[test]
    fn wear_levelling_allocates_the_least_worn_free_block() {
        let mut ftl = PageFtl::new(geo(1, 1, 1, 1, 6, 2), &cfg(TieBreak::LowestId, true)).unwrap();
        for (b, n) in [(0, 3), (1, 1), (2, 0), (3, 2), (4, 0), (5, 7)] {
            ftl.blocks[b].erase_count = n;
        }
        let p = &mut ftl.planes[0];
        p.heap.clear();
        for b in 0..6u32 {
            let key = (ftl.blocks[b as usize].erase_count as u64) << 32 | b as u64;
            ftl.planes[0].heap.push(Reverse(key));
        }
        let order: Vec<u32> = (0..6).map(|_| ftl.pop_free(0).unwrap()).collect();
        assert_eq!(order, [2, 4, 1, 3, 0, 5]);
    }

    #[test]
    fn writes_are_refused_not_panicking_when_a_plane_is_full() {
        // Dynamic placement puts everything on plane 0 of two.
        let mut ftl = PageFtl::new(geo(1, 1, 1, 2, 6, 4), &cfg(TieBreak::LowestId, true)).unwrap();
        let p = PlaneId(0);
        let mut written = 0;
        for l in 0..ftl.logical_pages() {
            match ftl.write(Lpn(l), p) {
                Ok(_) => written += 1,
                Err(e) => {
                    assert_eq!(e, FtlError::NoFreePage { plane: p });
                    break;
                }
            }
        }
        // 6 blocks × 4 pages, one block's worth held back for GC.
        assert_eq!(written, 20);
        assert!(ftl.needs_gc(p));
        assert!(ftl.gc_begin(p).is_none(), "nothing to reclaim: every page is valid");
        assert_eq!(ftl.stats().host_writes_refused, 1);
        // The other plane is unaffected.
        assert!(ftl.write(Lpn(0), PlaneId(1)).is_ok());
    }

    #[test]
    fn copyback_moves_stay_in_the_plane() {
        let c = FtlConfig { copyback: true, ..cfg(TieBreak::LowestId, true) };
        let mut ftl = PageFtl::new(geo(1, 1, 1, 2, 6, 4), &c).unwrap();
        let p = PlaneId(1);
        // Cold LPNs interleaved with hot ones, so victims hold valid data to move.
        for i in 0..60 {
            let lpn = if i % 2 == 0 && i < 16 { Lpn(5 + i) } else { Lpn(i % 3) };
            if ftl.needs_gc(p) {
                ftl.gc_begin(p).unwrap();
                for s in gc(&mut ftl, p) {
                    if let GcStep::Move { from, to, copyback, .. } = s {
                        assert!(copyback);
                        let g = ftl.geometry();
                        assert_eq!(g.plane_of_block(g.block_of(from)), p);
                        assert_eq!(g.plane_of_block(g.block_of(to)), p);
                    }
                }
            }
            ftl.write(lpn, p).unwrap();
        }
        assert!(ftl.stats().gc_copybacks > 0);
        assert_eq!(ftl.stats().gc_copybacks, ftl.stats().gc_moves);
    }

    #[test]
    fn static_plane_follows_the_striping_order() {
        let g = geo(2, 2, 2, 2, 8, 4);
        for order in StripeOrder::all() {
            let c = FtlConfig { striping_order: order, ..cfg(TieBreak::LowestId, true) };
            let ftl = PageFtl::new(g.clone(), &c).unwrap();
            for l in 0..100 {
                assert_eq!(ftl.static_plane(Lpn(l)), order.plane_of(&g, l));
            }
        }
    }

    #[test]
    fn tables_are_allocated_lazily_on_the_replay_benchmark_device() {
        // 8 ch × 4 chips × 2 dies × 2 planes × 2048 blocks × 256 pages = 67 M pages.
        let g = geo(8, 4, 2, 2, 2048, 256);
        assert_eq!(g.total_pages(), 67_108_864);
        let mut ftl = PageFtl::new(g, &FtlConfig::default()).unwrap();
        let empty = ftl.memory_bytes();
        assert!(empty < 24 << 20, "empty FTL holds {empty} bytes");
        // Touch 1 GiB of 16 KiB pages, spread over the device.
        for l in 0..65_536u64 {
            let lpn = Lpn(l * 97 % ftl.logical_pages());
            let plane = ftl.static_plane(lpn);
            ftl.write(lpn, plane).unwrap();
        }
        let used = ftl.memory_bytes() - empty;
        // Every plane opened one block (256 × 1 KiB reverse maps) and at most 65 536
        // map chunks of 16 KiB were touched — far below the full 4 bytes × 62 M.
        assert!(used < 64 << 20, "{used} bytes after 65 536 writes");
    }

    #[test]
    fn more_than_64_pages_per_block_gc_finishes() {
        // SSDsim anchor bug: GC hung with > 64 pages per block.
        let c = FtlConfig { overprovisioning: 0.3, ..cfg(TieBreak::LowestId, true) };
        let mut ftl = PageFtl::new(geo(1, 1, 1, 1, 8, 512), &c).unwrap();
        let p = PlaneId(0);
        let n = ftl.logical_pages();
        for i in 0..n * 4 {
            let lpn = Lpn(i * 7919 % n);
            if ftl.needs_gc(p) {
                while ftl.needs_gc(p) {
                    ftl.gc_begin(p).expect("a victim exists");
                    gc(&mut ftl, p);
                }
            }
            ftl.write(lpn, p).unwrap();
        }
        assert!(ftl.stats().erases > 8);
    }
}
