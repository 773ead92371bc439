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

    /// Build the FTL from a configuration already validated against `geometry`.
    pub fn from_validated(geometry: Geometry, cfg: ValidatedFtlConfig) -> PageFtl {
        assert!(geometry.total_pages() < u32::MAX as u64, "32-bit page tables");
        assert!(cfg.logical_pages <= geometry.total_pages());
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
        (b / self.blocks_per_plane) as usize
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
        let b = ppa / self.ppb;
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
    /// ~2× on preconditioning a 256 GiB device); the value is discarded.
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
        self.static_planes[(lpn.0 % self.static_planes.len() as u64) as usize]
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
