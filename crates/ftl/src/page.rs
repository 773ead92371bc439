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
//! # Die-aligned allocation (`ftl.allocation = "die-aligned"`)
//!
//! Host writes then state [`WriteConstraint::Die`]: the caller picks the die, the FTL the
//! plane. Each die has one host write frontier, a **row**: one open host block per plane
//! of the die, all at the same block index when possible. Consecutive host writes to the
//! die fill plane 0, 1, …, P−1 at the same page, then the next page, so any P
//! consecutive writes that start at plane 0 form a legal multi-plane program. When the
//! row is full, the next one opens at the lowest block index free on every plane of the
//! die (under wear levelling: the index whose most-erased block is least erased, ties
//! lowest index). If no index is free on all planes, each plane opens its own first free
//! block (a *misaligned* row, counted in [`FtlStats::misaligned_rows`]). GC moves go to a
//! separate GC block per plane, so GC never shifts the host frontier; a GC block is
//! preferably a free block whose index is *not* free on every plane of the die, keeping
//! the common indices for host rows.
//!
//! A row needs one free block on each plane. A plane that cannot give one above its GC
//! reserve (see below) makes the write refuse with [`FtlError::NoFreePage`] naming that
//! plane when its GC can free space (a job is running or a block holds an invalid page):
//! the caller parks the write and runs GC there. A plane whose GC could not free
//! anything is left out of the row (a *partial* row, [`FtlStats::partial_rows`]) rather
//! than stalling the die forever; with static placement that needs a plane far fuller
//! than the others, as when every write of a die's cold data landed on one plane.
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
//! Under die-aligned allocation GC draws only on the plane's *GC room* — the rest of its
//! GC block plus its free blocks — since the host block is not GC's. A row may take a
//! free block from a plane only if its GC room afterwards still covers `v` while a job
//! is moving pages, or `pages_per_block − 1` (a whole future victim's worth) otherwise.
//! Moves keep *GC room − v* constant and the erase adds a block, so every job finishes.
//! A plane with 2 free blocks can always give one, so again a refusal implies `needs_gc`
//! on the plane it names.
//!
//! # Memory
//!
//! The forward map is one flat table of `u32` in an anonymous mapping that the system
//! zero-fills on first touch (advised for transparent huge pages; `lpn_map`), so only
//! the parts a run writes become resident; the reverse map (page → LPN) is one `u32` per page, allocated when a block
//! is opened and recycled through a pool when it is erased. There is no validity bitmap:
//! a page is valid iff the forward-map entry of the LPN its reverse entry names points
//! back to it; per-block valid counters are kept alongside (the conformance harness
//! checks that both agree). Per-block metadata is 32 bytes, the reverse map's handle
//! included, allocated zeroed (all zero is a fresh block), so only the pages of records
//! a run reaches become resident. Victim selection uses per-plane buckets of full blocks
//! indexed by invalid count (an array of block ids per bucket, each block knowing its
//! slot: O(1) insertion and removal), so a GC scans only the ids of the blocks tied for
//! the maximum. The buckets are built when a plane first runs low on free blocks (see
//! `PageFtl::buckets_live`): a run that never nears GC does not keep them.

use std::collections::{BTreeSet, VecDeque};

use lamina_nand_model::{BlockId, Geometry, PerBlock, PlaneId, Ppa};

mod cached;
mod rev;
#[cfg(test)]
mod untimed_tests;

use crate::api::{
    BlockInfo, FlashEffect, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts, WriteConstraint,
};
use crate::cmt::Cmt;
use crate::config::{
    Allocation, FtlConfig, FtlConfigError, Mapping, Replication, TieBreak, ValidatedFtlConfig,
};
use crate::lpn_map::LpnMap;
use crate::min_queue::MinQueue;

/// "No block" in block links and the active-block slot.
const NONE: u32 = u32::MAX;
/// Unmapped forward-map entry / invalid reverse-map entry.
const UNMAPPED: u32 = u32::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq, zerocopy::FromZeros)]
#[repr(u8)]
enum BlockState {
    /// Zero, so that an all-zero [`BlockMeta`] is a fresh block.
    Free = 0,
    Open,
    Closed,
    Victim,
}

/// A block's record. All zero is a fresh block (free, never erased, no reverse map), so
/// the records are allocated zeroed and a page of them is backed only once touched
/// ([`PerBlock::zeroed`]). 32 bytes.
#[derive(Clone, Copy, Debug, zerocopy::FromZeros)]
struct BlockMeta {
    /// Pages programmed since the last erase.
    written: u32,
    valid: u32,
    erase_count: u32,
    state: BlockState,
    /// Position in its invalid-count bucket (closed blocks only; any value otherwise).
    slot: u32,
    /// The block's reverse map, `PageFtl::rev_maps[rev]` (open, closed and victim
    /// blocks), or `NO_REV`. In the record (it fits in its padding) rather than in a
    /// table of its own, so a page program reads one block record, not two.
    rev: u32,
    /// When the block was closed (for the `oldest` tie-break).
    closed_seq: u64,
}

/// `BlockMeta::rev` of a block without a reverse map; `rev_maps[NO_REV]` is an empty
/// placeholder, never a block's.
const NO_REV: u32 = 0;

#[derive(Clone, Copy, Debug)]
struct GcState {
    victim: u32,
    next_page: u32,
    erased: bool,
}

#[derive(Clone, Debug)]
struct PlaneState {
    /// The open block host writes go to (per-plane allocation: GC moves too).
    active: u32,
    /// Die-aligned allocation: the open block GC moves go to.
    gc_active: u32,
    /// Cached mapping: the open block translation pages go to (`NONE` otherwise).
    trans_active: u32,
    /// Free blocks, FIFO (per-plane allocation, wear levelling off).
    fifo: VecDeque<u32>,
    /// Free blocks keyed by `erase_count << 32 | block` (per-plane allocation, wear
    /// levelling on), least first.
    heap: MinQueue,
    /// Free blocks of die-aligned allocation, keyed by `erase_count << 32 | block` (wear
    /// levelling on) or `block` (off), so that blocks can be taken by index.
    free_set: BTreeSet<u64>,
    /// No closed block of the plane has more invalid pages than this.
    max_invalid: u32,
    gc: Option<GcState>,
    valid: u64,
}

/// The host write frontier of one die under die-aligned allocation: the open row.
#[derive(Clone, Copy, Debug)]
struct Row {
    /// Page the next write gets; `pages_per_block` when no row is open.
    page: u32,
    /// Plane index (within the die) the next write goes to; a bit of `mask`.
    slot: u32,
    /// Planes (indices within the die) the row spans.
    mask: u64,
}

/// How the next row of a die would open.
#[derive(Clone, Copy, Debug)]
struct RowPlan {
    /// Planes that give a block.
    mask: u64,
    /// The block index shared by all of them, if one is free on all.
    common: Option<u32>,
}

/// What [`PageFtl::write_group`] needs to undo one accepted write of a refused group.
#[derive(Clone, Copy, Debug)]
struct Undo {
    lpn: u64,
    /// The previous copy (`UNMAPPED` if none).
    old: u32,
    new: u32,
    /// Die-aligned allocation: the die written and its row before the write.
    die: u32,
    row: Row,
}

/// Page-level mapping FTL. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct PageFtl {
    geometry: Geometry,
    cfg: ValidatedFtlConfig,
    ppb: u32,
    blocks_per_plane: u32,
    /// Static plane of `lpn` = `static_planes[lpn % total_planes]`.
    static_planes: Box<[PlaneId]>,
    /// Under RAIN 1: the static plane of mirror page `host_pages + l` is
    /// `mirror_planes[l % total_planes]`; empty without replication.
    mirror_planes: Box<[PlaneId]>,
    /// Host-addressable logical pages ([`Ftl::host_pages`]).
    host_pages: u64,
    /// Forward map: `ppa + 1` of each logical page, 0 when unmapped.
    map: LpnMap,
    /// Changes of the forward map so far ([`Ftl::lookup_epoch`]).
    map_epoch: u64,
    /// The pages whose mapping changed, once [`Ftl::log_moves`] asked for them: every
    /// change goes through `map_set`, which records it here.
    moves: crate::MoveLog,
    /// Every reverse map made so far (the logical page of each page of a block,
    /// `UNMAPPED` where none), named by `BlockMeta::rev`; entry `NO_REV` is an empty
    /// placeholder. Dense: the maps' handles of the open blocks share a few cache lines.
    rev_maps: Vec<Box<[u32]>>,
    /// Handles of the maps no block holds (erased blocks'), reused before new ones.
    rev_free: Vec<u32>,
    /// Fresh reverse maps when `rev_free` is empty (made ahead on a helper thread).
    rev_supply: rev::RevSupply,
    /// Padded a cache line per plane ([`PerBlock`]): the write frontiers' records of all
    /// planes fall into different cache sets instead of a power-of-two stride apart into one.
    blocks: PerBlock<BlockMeta>,
    planes: Vec<PlaneState>,
    /// The closed blocks of each invalid-count bucket, `plane × (ppb + 1) + invalid`,
    /// in no particular order: every victim choice is the unique best under a total
    /// order ([`Self::tie_beats`]), so the order never reaches a result. An array, not a
    /// linked list, so that a victim search reads contiguous ids (with `lowest_id` no
    /// block record at all) instead of chasing one dependent cache miss per block.
    buckets: Vec<Vec<u32>>,
    /// Whether `buckets` hold the closed blocks. They are built (from the block records,
    /// [`Self::build_buckets`]) when a plane's free blocks first fall to
    /// [`Self::buckets_trigger`], or a victim is first asked for, whichever comes first;
    /// until then they are empty and an overwrite only counts. No victim is chosen
    /// before that, and a bucket is a set (see above), so when they are built cannot
    /// reach a result; it saves every overwrite of a run that never nears GC two array
    /// updates and a miss on a third block's record (docs/performance.md).
    buckets_live: bool,
    close_seq: u64,
    stats: FtlStats,
    /// Die-aligned allocation is on.
    aligned: bool,
    planes_per_die: u32,
    /// Die-aligned allocation: the host row of every die (empty otherwise).
    rows: Vec<Row>,
    /// Die-aligned allocation: GC may pick a victim with up to this percentage of the
    /// greediest one's invalid pages fewer if that keeps a block index free on more
    /// planes of the die (see `select_aligned_victim`; `ftl.mbm_align_slack_percent`).
    align_slack_percent: u32,
    /// Scratch of `write_group` (kept to avoid allocating per group).
    undo: Vec<Undo>,
    /// `ftl.mapping = "cached"`: the cached mapping table (see [`crate::cmt`]). Its
    /// translation page `t` is the internal logical page `logical_pages + t` of the
    /// forward map, whose entry is therefore the GTD.
    cmt: Option<Box<Cmt>>,
}

/// The PPA a forward-map entry holds: `UNMAPPED` (u32::MAX) is stored as 0 and every
/// `ppa` as `ppa + 1` (so a fresh, zeroed map is all unmapped).
#[inline(always)]
fn stored_ppa(entry: u32) -> u32 {
    entry.wrapping_sub(1)
}

/// Pages a warming hint reads per batch ([`Ftl::warm_writes`], [`Ftl::warm_lookups`]).
const WARM_BATCH: usize = 64;

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
        // RAIN 1: a mirror's plane is its primary's, half the chips further on (plane ids
        // are numbered chip by chip, so that is a shift by whole chips).
        let mirror_planes = match cfg.config.replication {
            Replication::None => Box::default(),
            Replication::Rain1 => {
                let per_chip = geometry.dies_per_chip() * geometry.planes_per_die();
                let shift = geometry.total_chips() / 2 * per_chip;
                static_planes.iter().map(|p| PlaneId((p.0 + shift) % planes_n)).collect()
            }
        };
        let wl = cfg.config.wear_leveling;
        let aligned = cfg.config.allocation == Allocation::DieAligned;
        let planes = (0..planes_n)
            .map(|p| {
                let first = p * blocks_per_plane;
                let ids = first..first + blocks_per_plane;
                let (fifo, heap, free_set) = match (aligned, wl) {
                    (true, _) => (VecDeque::new(), MinQueue::default(), ids.map(|b| b as u64).collect()),
                    (false, true) => {
                        (VecDeque::new(), MinQueue::from_ascending(ids.map(|b| b as u64)), BTreeSet::new())
                    }
                    (false, false) => (ids.collect(), MinQueue::default(), BTreeSet::new()),
                };
                PlaneState {
                    active: NONE,
                    gc_active: NONE,
                    trans_active: NONE,
                    fifo,
                    heap,
                    free_set,
                    max_invalid: 0,
                    gc: None,
                    valid: 0,
                }
            })
            .collect();
        let planes_per_die = geometry.planes_per_die();
        let no_row = Row { page: ppb, slot: 0, mask: 0 };
        let rows = if aligned { vec![no_row; geometry.total_dies() as usize] } else { Vec::new() };
        let blocks = PerBlock::zeroed(&geometry);
        let cmt = (cfg.config.mapping == Mapping::Cached).then(|| {
            let per_page = cfg.config.translation_entries_per_page(&geometry);
            Box::new(Cmt::new(cfg.config.cmt_capacity(&geometry), cfg.logical_pages, per_page, planes_n))
        });
        let map_len = cfg.logical_pages + cmt.as_ref().map_or(0, |c| c.tpages());
        PageFtl {
            ppb,
            blocks_per_plane,
            static_planes,
            mirror_planes,
            host_pages: cfg.host_pages,
            map: LpnMap::zeroed(map_len),
            map_epoch: 0,
            moves: crate::MoveLog::default(),
            rev_maps: vec![Box::default()],
            rev_free: Vec::new(),
            rev_supply: rev::RevSupply::new(ppb, geometry.total_blocks() as usize),
            blocks,
            planes,
            buckets: vec![Vec::new(); planes_n as usize * (ppb as usize + 1)],
            buckets_live: false,
            close_seq: 0,
            stats: FtlStats::default(),
            aligned,
            planes_per_die,
            rows,
            align_slack_percent: crate::config::DEFAULT_ALIGN_SLACK_PERCENT,
            undo: Vec::new(),
            cmt,
            geometry,
            cfg,
        }
    }

    /// Set the die-aligned allocation's victim slack (`ftl.mbm_align_slack_percent`, at
    /// most 100; [`crate::mbm::build`] passes MBM's), see `select_aligned_victim`.
    pub(crate) fn set_align_slack_percent(&mut self, percent: u32) {
        assert!(percent <= 100, "slack {percent} % validated to at most 100");
        self.align_slack_percent = percent;
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
        stored_ppa(self.map.get(lpn))
    }

    #[inline]
    fn map_set(&mut self, lpn: u64, ppa: u32) {
        self.map.set(lpn, ppa.wrapping_add(1));
        self.map_epoch = self.map_epoch.wrapping_add(1);
        self.moves.record(Lpn(lpn));
    }

    #[inline]
    fn plane_of_block(&self, b: u32) -> usize {
        self.geometry.plane_of_block(BlockId(b)).idx()
    }

    #[inline]
    fn free_count(&self, plane: usize) -> u32 {
        // Only the pool of the configured allocation holds blocks (`push_free`); reading
        // just that one keeps the check to one cache line of the plane's state.
        let p = &self.planes[plane];
        let n = if self.aligned {
            p.free_set.len()
        } else if self.cfg.config.wear_leveling {
            p.heap.len()
        } else {
            p.fifo.len()
        };
        debug_assert_eq!(n, p.fifo.len() + p.heap.len() + p.free_set.len(), "blocks in an unused free pool");
        n as u32
    }

    /// Erased pages left in open block `b` (0 for `NONE`).
    #[inline]
    fn rest(&self, b: u32) -> u64 {
        if b == NONE { 0 } else { (self.ppb - self.blocks[b as usize].written) as u64 }
    }

    /// Free pages of a plane: rest of the open blocks plus the free blocks.
    fn room(&self, plane: usize) -> u64 {
        let p = &self.planes[plane];
        self.rest(p.active)
            + self.rest(p.gc_active)
            + self.rest(p.trans_active)
            + self.free_count(plane) as u64 * self.ppb as u64
    }

    /// Free pages GC may use: everything under per-plane allocation; the GC block and the
    /// free blocks under die-aligned allocation (the host row's blocks are not GC's).
    fn gc_room(&self, plane: usize) -> u64 {
        if self.aligned {
            self.rest(self.planes[plane].gc_active) + self.free_count(plane) as u64 * self.ppb as u64
        } else {
            self.room(plane)
        }
    }

    /// Valid pages the plane's GC job still has to move (0 without a job, or once its
    /// victim is erased).
    #[inline]
    fn pending(&self, plane: usize) -> u64 {
        match self.planes[plane].gc {
            Some(GcState { victim, erased: false, .. }) => self.blocks[victim as usize].valid as u64,
            _ => 0,
        }
        .wrapping_add(self.queued_writebacks(plane))
    }

    /// Per-plane allocation: the room check of `write` (the reserve of the module docs).
    #[inline(always)]
    fn plane_can_write(&self, plane: usize) -> bool {
        // Without a CMT the reserve is one block and the pending work at most one more
        // (a victim's valid pages; no write-backs), so three free blocks are room enough
        // whatever the open blocks hold: the sum need not be formed (the common case).
        if self.cmt.is_none() && self.free_count(plane) > 2 {
            debug_assert!(self.room_above_reserve(plane));
            return true;
        }
        self.room_above_reserve(plane)
    }

    /// [`Self::plane_can_write`] by the sum (out of line: the rare case).
    #[inline(never)]
    fn room_above_reserve(&self, plane: usize) -> bool {
        self.room(plane) > self.reserve() + self.pending(plane)
    }

    fn head_index(&self, plane: usize, invalid: u32) -> usize {
        plane * (self.ppb as usize + 1) + invalid as usize
    }

    /// The cache lines [`Self::invalidate`] touches in bucket `h` and the next one when
    /// it moves the block at `slot` of `h`: that slot, the last block of `h` (it fills the
    /// slot), that block's record, and the end of bucket `h + 1`. A speed hint for the
    /// warm-ups; the value is meaningless.
    fn warm_bucket_ends(&self, h: usize, slot: u32) -> u32 {
        let bucket = &self.buckets[h];
        let mut acc = bucket.get(slot as usize).copied().unwrap_or(0);
        if let Some(&last) = bucket.last() {
            acc ^= self.blocks[last as usize].slot;
        }
        acc ^ self.buckets.get(h + 1).and_then(|n| n.last()).copied().unwrap_or(0)
    }

    fn bucket_insert(&mut self, b: u32, invalid: u32) {
        if !self.buckets_live {
            return;
        }
        let plane = self.plane_of_block(b);
        let h = self.head_index(plane, invalid);
        let bucket = &mut self.buckets[h];
        self.blocks[b as usize].slot = bucket.len() as u32;
        bucket.push(b);
        let p = &mut self.planes[plane];
        p.max_invalid = p.max_invalid.max(invalid);
    }

    fn bucket_remove(&mut self, b: u32, invalid: u32) {
        if !self.buckets_live {
            return;
        }
        let h = self.head_index(self.plane_of_block(b), invalid);
        let slot = self.blocks[b as usize].slot as usize;
        let bucket = &mut self.buckets[h];
        assert_eq!(bucket.get(slot), Some(&b), "bucket list corrupt");
        bucket.swap_remove(slot);
        if let Some(&moved) = bucket.get(slot) {
            self.blocks[moved as usize].slot = slot as u32;
        }
    }

    fn pop_free(&mut self, plane: usize) -> Option<u32> {
        let p = &mut self.planes[plane];
        let b = if self.cfg.config.wear_leveling {
            p.heap.pop().map(|key| key as u32)
        } else {
            p.fifo.pop_front()
        };
        self.took_free(plane);
        b
    }

    /// Free blocks of a plane at or below which the buckets must exist: the GC
    /// threshold (below it a plane asks for GC and a write may check for a victim,
    /// `gc_can_progress`) with a margin of two blocks, or four, whichever is more
    /// (without a write-back backlog, a plane that cannot give a block,
    /// [`Self::can_give`], has at most three; with one, `gc_can_progress` reads the
    /// block records until the buckets exist).
    #[inline]
    fn buckets_trigger(&self) -> u32 {
        self.cfg.gc_threshold_blocks.saturating_add(2).max(4)
    }

    /// A free block of `plane` was taken: build the buckets if the plane is now low.
    #[inline]
    fn took_free(&mut self, plane: usize) {
        if !self.buckets_live && self.free_count(plane) <= self.buckets_trigger() {
            self.build_buckets();
        }
    }

    /// Put every closed block into its bucket (once; see [`Self::buckets_live`]).
    #[cold]
    #[inline(never)]
    fn build_buckets(&mut self) {
        debug_assert!(self.buckets.iter().all(Vec::is_empty));
        self.buckets_live = true;
        for b in 0..self.geometry.total_blocks() {
            let m = &self.blocks[b as usize];
            if m.state == BlockState::Closed {
                let invalid = m.written - m.valid;
                self.bucket_insert(b, invalid);
            }
        }
    }

    /// Key of free block `b` in the die-aligned free set.
    #[inline]
    fn free_key(&self, b: u32) -> u64 {
        let wear = if self.cfg.config.wear_leveling { self.blocks[b as usize].erase_count as u64 } else { 0 };
        wear << 32 | b as u64
    }

    fn push_free(&mut self, b: u32) {
        let plane = self.plane_of_block(b);
        let key = (self.blocks[b as usize].erase_count as u64) << 32 | b as u64;
        if self.aligned {
            let k = self.free_key(b);
            self.planes[plane].free_set.insert(k);
            return;
        }
        let p = &mut self.planes[plane];
        if self.cfg.config.wear_leveling {
            p.heap.push(key);
        } else {
            p.fifo.push_back(b);
        }
    }

    /// Die-aligned allocation: take free block `b` out of its plane's free set.
    fn take_free(&mut self, b: u32) {
        let plane = self.plane_of_block(b);
        let key = self.free_key(b);
        assert!(self.planes[plane].free_set.remove(&key), "block {b} is not free");
        self.took_free(plane);
    }

    /// Mark free block `b` open (it left the free pool) and give it a reverse map.
    fn open_block(&mut self, b: u32) {
        let h = match self.rev_free.pop() {
            Some(h) => {
                self.rev_maps[h as usize].fill(UNMAPPED);
                h
            }
            None => self.new_rev_map(),
        };
        let m = &mut self.blocks[b as usize];
        #[cfg(debug_assertions)]
        let rev_was = m.rev;
        // The record's first access here is a store (a free block's `rev` is `NO_REV`,
        // whatever is stored first). The records are a zeroed allocation that the system
        // backs page by page on first touch; a load first would map its shared zero page
        // and this store then copy it and flush the TLB of every core running the
        // process, an inter-processor interrupt costing ~25 µs on this project's VMs
        // (231 of them in the MQSim comparison run, 1,272 on SSDsim's geometry:
        // docs/performance.md, sixteenth session). The fence keeps the compiler from
        // moving the checks' loads above the store.
        m.rev = h;
        std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
        assert!(m.state == BlockState::Free && m.written == 0 && m.valid == 0);
        #[cfg(debug_assertions)]
        debug_assert_eq!(rev_was, NO_REV);
        m.state = BlockState::Open;
    }

    /// A fresh reverse map's handle (all `UNMAPPED`); the maps the supply hands over
    /// with it go to `rev_free`.
    #[cold]
    #[inline(never)]
    fn new_rev_map(&mut self) -> u32 {
        let handle = |n: usize| u32::try_from(n).expect("a reverse map per block at most");
        let start = handle(self.rev_maps.len());
        // The supply appends the rest of a batch to `rev_maps`: those are free.
        let first = self.rev_supply.fresh(&mut self.rev_maps);
        self.rev_free.extend(start..handle(self.rev_maps.len()));
        self.rev_maps.push(first);
        handle(self.rev_maps.len() - 1)
    }

    /// Block `b`'s reverse map handed back (the block was erased or never programmed).
    fn release_rev(&mut self, b: u32) {
        let h = std::mem::replace(&mut self.blocks[b as usize].rev, NO_REV);
        assert!(h != NO_REV, "block {b} has no reverse map");
        self.rev_free.push(h);
    }

    /// Block `b`'s reverse map (panics when it has none: a free block).
    #[inline(always)]
    fn rev_mut(&mut self, b: u32) -> &mut [u32] {
        let h = self.blocks[b as usize].rev;
        debug_assert!(h != NO_REV, "block {b} has no reverse map");
        &mut self.rev_maps[h as usize]
    }

    /// Undo [`Self::open_block`] of a block nothing was programmed into, returning it to
    /// the front of the free pool (rollback of a refused write group).
    fn unopen_block(&mut self, b: u32) {
        let m = &mut self.blocks[b as usize];
        assert!(m.state == BlockState::Open && m.written == 0, "block {b} was programmed");
        m.state = BlockState::Free;
        self.release_rev(b);
        let plane = self.plane_of_block(b);
        if self.planes[plane].active == b {
            self.planes[plane].active = NONE;
        }
        if self.aligned || self.cfg.config.wear_leveling {
            self.push_free(b);
        } else {
            self.planes[plane].fifo.push_front(b);
        }
    }

    /// The forward-map entries of the pages of `chunk` (at most [`WARM_BATCH`]) that are
    /// in range, into the front of `entries`, directory level then leaf level so that the
    /// misses of a level overlap (`LpnMap::get_many`); returns how many. The first level of
    /// the warming hints.
    fn warm_entries(&self, chunk: &[Lpn], entries: &mut [u32; WARM_BATCH]) -> usize {
        let mut idx = [0u64; WARM_BATCH];
        let mut n = 0;
        for l in chunk {
            if l.0 < self.cfg.logical_pages {
                idx[n] = l.0;
                n += 1;
            }
        }
        self.map.get_many(&idx[..n], &mut entries[..n]);
        n
    }

    /// [`Ftl::write_unmapped_run`] (`CHECK`: each page is looked up, and the run stops
    /// before a mapped one) and [`Ftl::write_fresh_run`] (the caller vouches that no page
    /// is mapped: the lookup is a debug assertion).
    #[inline(always)]
    fn unmapped_run<const CHECK: bool>(&mut self, lpns: &[Lpn], out: &mut Vec<Ppa>) -> Option<usize> {
        // Die-aligned allocation, the cached mapping and replicas take the full path.
        if self.aligned || self.cmt.is_some() || !self.mirror_planes.is_empty() {
            return None;
        }
        let start = out.len();
        for &lpn in lpns {
            assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
            let pi = self.static_plane(lpn).idx();
            if !self.plane_can_write(pi) {
                break;
            }
            if CHECK {
                if self.map_get(lpn.0) != UNMAPPED {
                    break;
                }
            } else {
                debug_assert!(self.map_get(lpn.0) == UNMAPPED, "write_fresh_run of mapped {lpn}");
            }
            let ppa = self.program(pi, lpn.0, false);
            self.map_set(lpn.0, ppa);
            self.stats.host_writes += 1;
            out.push(Ppa(ppa as u64));
            // `needs_gc` without a CMT (no write-backs are ever queued).
            if self.free_count(pi) < self.cfg.gc_threshold_blocks {
                break;
            }
        }
        Some(out.len() - start)
    }

    /// Program the next page of the plane's host block (`gc` false) or, under
    /// die-aligned allocation, of its GC block (`gc` true) with `lpn` — opening a new
    /// block if needed (per-plane allocation and GC blocks; host rows are opened by
    /// [`Self::open_row`]), closing it when full — and return the page. Does not touch the
    /// forward map.
    #[inline(always)]
    fn program(&mut self, plane: usize, lpn: u64, gc: bool) -> u32 {
        let gc_block = gc && self.aligned;
        let p = &self.planes[plane];
        let mut b = if gc_block { p.gc_active } else { p.active };
        if b == NONE {
            b = self.open_frontier(plane, gc_block);
        }
        let m = &mut self.blocks[b as usize];
        let off = m.written;
        m.written += 1;
        m.valid += 1;
        let full = m.written == self.ppb;
        let h = m.rev;
        debug_assert!(h != NO_REV, "open block {b} has no reverse map");
        self.rev_maps[h as usize][off as usize] = lpn as u32;
        self.planes[plane].valid += 1;
        if full {
            self.close_frontier(plane, b, gc_block);
        }
        b * self.ppb + off
    }

    /// `program` found no open block: open the next one (kept out of line, once per
    /// block, so the per-page path stays short).
    #[inline(never)]
    fn open_frontier(&mut self, plane: usize, gc_block: bool) -> u32 {
        assert!(gc_block || !self.aligned, "die-aligned host write without an open row");
        let b = if gc_block {
            self.gc_block(plane)
        } else {
            self.pop_free(plane).expect("page FTL: no free block for a program; the GC reserve was violated")
        };
        self.open_block(b);
        let p = &mut self.planes[plane];
        *(if gc_block { &mut p.gc_active } else { &mut p.active }) = b;
        b
    }

    /// `program` filled block `b`: close it into its bucket list (out of line, as above).
    #[inline(never)]
    fn close_frontier(&mut self, plane: usize, b: u32, gc_block: bool) {
        let m = &mut self.blocks[b as usize];
        m.state = BlockState::Closed;
        m.closed_seq = self.close_seq;
        self.close_seq += 1;
        let invalid = self.ppb - m.valid;
        let p = &mut self.planes[plane];
        *(if gc_block { &mut p.gc_active } else { &mut p.active }) = NONE;
        self.bucket_insert(b, invalid);
    }

    /// Die-aligned allocation: the block a plane's GC block opens next — the free block
    /// whose index is free (or being reclaimed) on the fewest other planes of the die, so
    /// that the indices closest to being free on every plane stay for host rows; ties in
    /// free-set order (least worn, or lowest index).
    fn gc_block(&mut self, plane: usize) -> u32 {
        let pick = self.least_promising_free(plane);
        self.take_free(pick);
        pick
    }

    /// The free block of `plane` whose index is free or being reclaimed on the fewest
    /// other planes of its die (first in free-set order among those).
    fn least_promising_free(&self, plane: usize) -> u32 {
        let mut best: Option<(usize, u32)> = None;
        for &key in &self.planes[plane].free_set {
            let b = key as u32;
            let n = self.siblings_reclaimed(b);
            if best.is_none_or(|(m, _)| n < m) {
                best = Some((n, b));
                if n == 0 {
                    break;
                }
            }
        }
        best.expect("page FTL: no free block for a GC move; the GC reserve was violated").1
    }

    /// Other planes of `b`'s die on which `b`'s block index is free or a GC victim.
    fn siblings_reclaimed(&self, b: u32) -> usize {
        let plane = b / self.blocks_per_plane;
        let (die, me, index) = (plane / self.planes_per_die, plane % self.planes_per_die, self.index_of(b));
        (0..self.planes_per_die)
            .filter(|&i| i != me)
            .filter(|&i| {
                let s = self.blocks[self.block_at(die, i, index) as usize].state;
                s == BlockState::Free || s == BlockState::Victim
            })
            .count()
    }

    #[inline]
    fn all_planes_mask(&self) -> u64 {
        u64::MAX >> (64 - self.planes_per_die)
    }

    #[inline]
    fn index_of(&self, b: u32) -> u32 {
        b % self.blocks_per_plane
    }

    /// Block `index` of the `i`-th plane of `die`.
    #[inline]
    fn block_at(&self, die: u32, i: u32, index: u32) -> u32 {
        (die * self.planes_per_die + i) * self.blocks_per_plane + index
    }

    /// Block index `index` is free on every plane of `die` in `mask`.
    fn index_free_on(&self, die: u32, mask: u64, index: u32) -> bool {
        bits(mask).all(|i| self.blocks[self.block_at(die, i, index) as usize].state == BlockState::Free)
    }

    /// The block index free on every plane of `die` in `mask` that a new row takes: the
    /// lowest, or under wear levelling the one whose most-erased block is least erased
    /// (ties: lowest index). `None` if no index is free on all of them.
    fn common_index(&self, die: u32, mask: u64) -> Option<u32> {
        let lead = die * self.planes_per_die + mask.trailing_zeros();
        let wl = self.cfg.config.wear_leveling;
        let mut best: Option<(u32, u32)> = None;
        for &key in &self.planes[lead as usize].free_set {
            if let Some((worst, _)) = best
                && (key >> 32) as u32 > worst
            {
                break; // keys are in erase-count order: no later index can do better
            }
            let index = self.index_of(key as u32);
            if !self.index_free_on(die, mask, index) {
                continue;
            }
            if !wl {
                return Some(index);
            }
            let worst = bits(mask)
                .map(|i| self.blocks[self.block_at(die, i, index) as usize].erase_count)
                .max()
                .unwrap_or(0);
            if best.is_none_or(|b| (worst, index) < b) {
                best = Some((worst, index));
            }
        }
        best.map(|(_, index)| index)
    }

    /// Die-aligned allocation: plane `plane` can give a free block to a new row and keep
    /// its GC reserve (see the module docs).
    fn can_give(&self, plane: usize) -> bool {
        if self.free_count(plane) == 0 {
            return false;
        }
        let need = match self.planes[plane].gc {
            Some(GcState { erased: false, .. }) => self.pending(plane),
            _ => self.ppb as u64 - 1,
        };
        self.gc_room(plane) - self.ppb as u64 >= need
    }

    /// GC on the plane can free space: a job is moving pages, or a closed block holds an
    /// invalid page (a victim exists).
    fn gc_can_progress(&self, plane: usize) -> bool {
        if matches!(self.planes[plane].gc, Some(GcState { erased: false, .. })) {
            return true;
        }
        if !self.buckets_live {
            // Only while the plane has free blocks above the trigger (a write-back
            // backlog can make it unable to give one): read the records.
            let first = plane as u32 * self.blocks_per_plane;
            return (first..first + self.blocks_per_plane).any(|b| {
                let m = &self.blocks[b as usize];
                m.state == BlockState::Closed && m.written > m.valid
            });
        }
        (1..=self.planes[plane].max_invalid).any(|k| !self.buckets[self.head_index(plane, k)].is_empty())
    }

    /// How the next row of `die` would open, or the refusal: planes that cannot give a
    /// block but whose GC can free one make the write wait (the first of them is named);
    /// planes whose GC cannot are left out.
    fn plan_row(&self, die: u32) -> Result<RowPlan, FtlError> {
        let first = die * self.planes_per_die;
        let mut mask = 0u64;
        for i in 0..self.planes_per_die {
            let q = (first + i) as usize;
            if self.can_give(q) {
                mask |= 1 << i;
            } else if self.gc_can_progress(q) {
                return Err(FtlError::NoFreePage { plane: PlaneId(first + i) });
            }
        }
        if mask == 0 {
            // Every plane is full of valid data (only dynamic placement can do that).
            return Err(FtlError::NoFreePage { plane: PlaneId(first) });
        }
        Ok(RowPlan { mask, common: self.common_index(die, mask) })
    }

    /// The block plane `i` of `die` opens for `plan`.
    fn planned_block(&self, die: u32, i: u32, plan: RowPlan) -> u32 {
        match plan.common {
            Some(index) => self.block_at(die, i, index),
            None => self.least_promising_free((die * self.planes_per_die + i) as usize),
        }
    }

    /// Open the row `plan` describes on `die`.
    fn open_row(&mut self, die: u32, plan: RowPlan) {
        for i in bits(plan.mask) {
            let b = self.planned_block(die, i, plan);
            self.take_free(b);
            self.open_block(b);
            self.planes[(die * self.planes_per_die + i) as usize].active = b;
        }
        let full = plan.mask == self.all_planes_mask();
        let s = &mut self.stats;
        if !full {
            s.partial_rows += 1;
        } else if plan.common.is_some() {
            s.aligned_rows += 1;
        } else {
            s.misaligned_rows += 1;
        }
        self.rows[die as usize] = Row { page: 0, slot: plan.mask.trailing_zeros(), mask: plan.mask };
    }

    /// Die-aligned allocation: the plane (global index) the next host write to `die`
    /// lands on, opening a row first if none is open.
    fn row_slot(&mut self, die: u32) -> Result<usize, FtlError> {
        if self.rows[die as usize].page == self.ppb {
            let plan = self.plan_row(die)?;
            self.open_row(die, plan);
        }
        Ok((die * self.planes_per_die + self.rows[die as usize].slot) as usize)
    }

    /// Advance `die`'s row past the slot just written.
    fn advance_row(&mut self, die: u32) {
        let row = &mut self.rows[die as usize];
        let above = row.mask & u64::MAX.checked_shl(row.slot + 1).unwrap_or(0);
        if above != 0 {
            row.slot = above.trailing_zeros();
        } else {
            row.page += 1;
            row.slot = row.mask.trailing_zeros();
        }
    }

    /// Undo [`Self::invalidate`] of `ppa` (rollback of a refused write group).
    fn revalidate(&mut self, ppa: u32) {
        let b = ppa / self.ppb;
        let plane = self.plane_of_block(b);
        self.planes[plane].valid += 1;
        let m = &mut self.blocks[b as usize];
        let invalid = m.written - m.valid;
        m.valid += 1;
        if m.state == BlockState::Closed {
            self.bucket_remove(b, invalid);
            self.bucket_insert(b, invalid - 1);
        }
    }

    /// Undo one accepted host write (rollback of a refused write group; writes are undone
    /// newest first, so the state is the one right after this write).
    fn unwrite(&mut self, u: Undo) {
        let b = u.new / self.ppb;
        let off = u.new % self.ppb;
        let plane = self.plane_of_block(b);
        if self.blocks[b as usize].state == BlockState::Closed {
            let invalid = self.ppb - self.blocks[b as usize].valid;
            self.bucket_remove(b, invalid);
            self.blocks[b as usize].state = BlockState::Open;
            self.planes[plane].active = b;
        }
        let m = &mut self.blocks[b as usize];
        assert_eq!(m.written, off + 1, "write-group rollback out of order");
        m.written -= 1;
        m.valid -= 1;
        self.rev_mut(b)[off as usize] = UNMAPPED;
        self.planes[plane].valid -= 1;
        if !self.aligned && off == 0 {
            self.unopen_block(b); // this write opened it
        }
        self.map_set(u.lpn, u.old);
        if u.old != UNMAPPED {
            self.revalidate(u.old);
        }
        if self.aligned {
            let opened = u.row.page == self.ppb;
            if opened {
                let first = u.die * self.planes_per_die;
                for i in bits(self.rows[u.die as usize].mask) {
                    let b = self.planes[(first + i) as usize].active;
                    self.unopen_block(b); // the row counters come back with the saved stats
                }
            }
            self.rows[u.die as usize] = u.row;
        }
    }

    /// Die-aligned host write: the die's next slot.
    fn write_aligned(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        let die = plane.0 / self.planes_per_die;
        let q = match self.row_slot(die) {
            Ok(q) => q,
            Err(e) => {
                self.stats.host_writes_refused += 1;
                return Err(e);
            }
        };
        debug_assert_eq!(self.blocks[self.planes[q].active as usize].written, self.rows[die as usize].page);
        let old = self.map_get(lpn.0);
        if old != UNMAPPED {
            self.invalidate(old);
        }
        let ppa = self.program(q, lpn.0, false);
        self.map_set(lpn.0, ppa);
        self.advance_row(die);
        self.stats.host_writes += 1;
        Ok(Ppa(ppa as u64))
    }

    /// The LPN whose current copy is page `off` of block `b`, if any. A page is valid iff
    /// its reverse-map entry names an LPN whose forward-map entry points back to it, so
    /// invalidating a page never has to touch the reverse map (a cache miss saved per
    /// overwrite).
    #[inline]
    fn valid_lpn(&self, b: u32, off: u32) -> Option<u32> {
        let h = self.blocks[b as usize].rev;
        if h == NO_REV {
            return None;
        }
        let lpn = self.rev_maps[h as usize][off as usize];
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
        if m.state == BlockState::Closed && self.buckets_live {
            self.bucket_remove(b, old_invalid);
            self.bucket_insert(b, old_invalid + 1);
        }
    }

    /// The tie-break among equally good victims: `a` beats `b`.
    fn tie_beats(&self, a: u32, b: u32) -> bool {
        let (x, y) = (&self.blocks[a as usize], &self.blocks[b as usize]);
        match self.cfg.config.victim_tie_break {
            TieBreak::LowestId => a < b,
            TieBreak::Oldest => x.closed_seq < y.closed_seq,
            TieBreak::LeastWorn => (x.erase_count, a) < (y.erase_count, b),
        }
    }

    fn select_victim(&mut self, plane: usize) -> Option<u32> {
        if !self.buckets_live {
            self.build_buckets();
        }
        let mut k = self.planes[plane].max_invalid;
        while k > 0 && self.buckets[self.head_index(plane, k)].is_empty() {
            k -= 1;
        }
        self.planes[plane].max_invalid = k;
        if k == 0 {
            return None;
        }
        if self.aligned {
            return Some(self.select_aligned_victim(plane, k));
        }
        let bucket = &self.buckets[self.head_index(plane, k)];
        let mut best = bucket[0];
        for &cur in &bucket[1..] {
            if self.tie_beats(cur, best) {
                best = cur;
            }
        }
        Some(best)
    }

    /// Die-aligned allocation: the victim among the closed blocks with at least
    /// `max − ⌊max × slack / 100⌋` invalid pages (`max` the plane's greatest) whose
    /// block index is free (or being reclaimed) on the most sibling planes, then the most
    /// invalid, then the tie-break. Reclaiming the same index on every plane of a die is
    /// what keeps an index free on all of them for the next host row; the slack bounds
    /// the extra pages moved.
    fn select_aligned_victim(&self, plane: usize, max: u32) -> u32 {
        let low = max - max * self.align_slack_percent / 100;
        let mut best: Option<(usize, u32, u32)> = None;
        for k in (low.max(1)..=max).rev() {
            for &cur in &self.buckets[self.head_index(plane, k)] {
                let score = (self.siblings_reclaimed(cur), k);
                let better = match best {
                    None => true,
                    Some((s, bk, b)) => score > (s, bk) || (score == (s, bk) && self.tie_beats(cur, b)),
                };
                if better {
                    best = Some((score.0, k, cur));
                }
            }
        }
        best.expect("the bucket at max is not empty").2
    }

    /// Read the forward-map entries of the victim's valid pages in one tight loop. Each
    /// GC move updates the entry of a random LPN — a cache miss when the map is large —
    /// and one move per `gc_step` call serialises those misses; independent loads in a
    /// loop overlap them, and the moves then hit in cache. Purely a speed hint (measured:
    /// 1.75× on preconditioning a 256 GiB device of 8 KiB pages); the value is discarded.
    fn warm_map_entries(&self, victim: u32) {
        let rev = &self.rev_maps[self.blocks[victim as usize].rev as usize];
        let mut acc = 0u32;
        for &lpn in rev.iter() {
            if lpn != UNMAPPED {
                acc ^= self.map_get(lpn as u64);
            }
        }
        std::hint::black_box(acc);
    }

    /// The moves of `gc_step` for the rest of job `job` on plane `pi`, in one loop: the
    /// same pages in the same order, the same state and counters, each move's program
    /// reported to `sink` ([`Ftl::gc_finish_untimed`]). Only for a job with a victim
    /// under the flat map (no translation pages to move); the erase stays `gc_step`'s.
    fn gc_moves_untimed(&mut self, pi: usize, job: GcState, sink: &mut dyn FnMut(FlashEffect)) {
        debug_assert!(self.cmt.is_none() && job.victim != NONE && !job.erased);
        let v = job.victim;
        // Taken out while the loop programs other blocks; nothing else reads it meanwhile.
        let h = self.blocks[v as usize].rev as usize;
        assert!(h != NO_REV as usize, "victim {v} has no reverse map");
        let rev = std::mem::take(&mut self.rev_maps[h]);
        let base = v * self.ppb;
        let copyback = self.cfg.config.copyback;
        for off in job.next_page..self.ppb {
            let lpn = rev[off as usize];
            if lpn == UNMAPPED || self.map_get(lpn as u64) != base + off {
                continue; // stale (`valid_lpn`)
            }
            // `invalidate` of a page of the victim (not in a bucket list any more).
            self.planes[pi].valid -= 1;
            self.blocks[v as usize].valid -= 1;
            let to = self.program(pi, lpn as u64, true);
            self.map_set(lpn as u64, to);
            self.stats.gc_moves += 1;
            self.stats.gc_copybacks += copyback as u64;
            sink(FlashEffect::Program { ppa: Ppa(to as u64), lpn: Lpn(lpn as u64) });
        }
        self.rev_maps[h] = rev;
        self.planes[pi].gc = Some(GcState { next_page: self.ppb, ..job });
    }

    fn erase(&mut self, b: u32) {
        let m = &mut self.blocks[b as usize];
        assert!(m.state == BlockState::Victim && m.valid == 0, "erasing block {b} with valid data");
        m.state = BlockState::Free;
        m.written = 0;
        m.erase_count += 1;
        self.release_rev(b);
        self.push_free(b);
        self.stats.erases += 1;
    }

    #[inline]
    fn check_plane(&self, plane: PlaneId) -> usize {
        assert!(plane.0 < self.geometry.total_planes(), "plane {} out of range", plane.0);
        plane.idx()
    }
}

/// The set bits of `mask`, lowest first.
fn bits(mask: u64) -> impl Iterator<Item = u32> {
    let mut m = mask;
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let i = m.trailing_zeros();
            m &= m - 1;
            i
        })
    })
}

impl Ftl for PageFtl {
    fn has_translation_reads(&self) -> bool {
        self.cmt.is_some()
    }

    fn translation_reads(&self, lpn: Lpn, out: &mut Vec<Ppa>) {
        if let Some(ppa) = self.translation_page_to_read(lpn.0) {
            out.push(Ppa(ppa as u64));
        }
    }

    fn translate(&mut self, lpn: Lpn, out: &mut Vec<Ppa>) -> Option<PlaneId> {
        self.cmt_read(lpn.0, out)
    }

    fn has_write_translation_reads(&self) -> bool {
        self.cmt.is_some()
    }

    fn translate_write(&mut self, lpn: Lpn, out: &mut Vec<Ppa>) {
        self.cmt_write_miss_read(lpn.0, out);
    }

    fn next_write_page(&self, plane: PlaneId) -> Option<u32> {
        if self.aligned {
            let row = self.rows[(self.check_plane(plane) as u32 / self.planes_per_die) as usize];
            return Some(if row.page == self.ppb { 0 } else { row.page });
        }
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
    fn lookup_epoch(&self) -> Option<u64> {
        // Under the cached mapping `lookup` answers from the CMT: no epoch is kept.
        self.cmt.is_none().then_some(self.map_epoch)
    }

    fn log_moves(&mut self) -> bool {
        self.moves.enable();
        true
    }

    fn take_moves(&mut self, out: &mut Vec<Lpn>) -> bool {
        self.moves.take_if_enabled(out)
    }

    #[inline]
    fn lookup(&self, lpn: Lpn) -> Option<Ppa> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        // Cached mapping: what the CMT or the translation page says (equal to the map:
        // the conformance harness checks every lookup against its reference).
        let p = match &self.cmt {
            None => self.map_get(lpn.0),
            Some(c) => c.get(lpn.0),
        };
        (p != UNMAPPED).then_some(Ppa(p as u64))
    }

    fn warm_write(&self, lpn: Lpn) {
        if lpn.0 >= self.cfg.logical_pages {
            return;
        }
        // The entry, then (a dependent load) the replaced page's block, then what
        // `invalidate` moves it between: the ends of its invalid-count bucket and of the
        // next one, and the block whose slot the removal fills.
        let p = self.map_get(lpn.0);
        let mut acc = p;
        if p != UNMAPPED {
            let b = p / self.ppb;
            let m = &self.blocks[b as usize];
            acc ^= m.valid;
            if m.state == BlockState::Closed && self.buckets_live {
                let h = self.head_index(self.plane_of_block(b), m.written - m.valid);
                acc ^= self.warm_bucket_ends(h, m.slot);
            }
        }
        std::hint::black_box(acc);
    }

    fn warm_lookups(&self, lpns: &[Lpn]) {
        // The map entries only (the first level of `warm_writes`).
        let mut acc = 0u32;
        for chunk in lpns.chunks(WARM_BATCH) {
            let mut entries = [0u32; WARM_BATCH];
            let n = self.warm_entries(chunk, &mut entries);
            acc = entries[..n].iter().fold(acc, |a, &e| a ^ e);
        }
        std::hint::black_box(acc);
    }

    fn prefetch_map_first(&self, lpns: &[Lpn]) {
        for l in lpns {
            self.map.prefetch_first(l.0);
        }
    }

    fn prefetch_map_second(&self, lpns: &[Lpn]) {
        for l in lpns {
            self.map.prefetch_second(l.0);
        }
    }

    fn warm_writes(&self, lpns: &[Lpn]) {
        // Level by level (see the trait): the entries; the replaced pages' blocks; the
        // ends of the bucket each leaves and of the one it joins; the blocks whose slots
        // the removals fill.
        const N: usize = WARM_BATCH;
        let mut acc = 0u32;
        for chunk in lpns.chunks(N) {
            let mut entries = [0u32; N];
            let n = self.warm_entries(chunk, &mut entries);
            let mut blocks = [NONE; N];
            for (b, &e) in blocks.iter_mut().zip(&entries[..n]) {
                let p = stored_ppa(e);
                if p != UNMAPPED {
                    *b = self.geometry.block_of(Ppa(p as u64)).0;
                }
            }
            if !self.buckets_live {
                // No bucket to move between yet (`buckets_live`): the replaced pages'
                // block records only, whose counts `invalidate` decrements.
                for &b in &blocks {
                    if b != NONE {
                        acc ^= self.blocks[b as usize].valid;
                    }
                }
                continue;
            }
            // The bucket each closed block leaves, and its slot there.
            let mut heads = [(NONE, 0); N];
            for (h, &b) in heads.iter_mut().zip(&blocks) {
                if b != NONE {
                    let m = &self.blocks[b as usize];
                    if m.state == BlockState::Closed {
                        *h = (self.head_index(self.plane_of_block(b), m.written - m.valid) as u32, m.slot);
                    }
                }
            }
            // The slot (the removal writes it), the last block of that bucket (it fills
            // the slot) and the end of the next bucket (where the block is pushed); then
            // the moved blocks.
            let mut moved = [NONE; N];
            for (m, &(h, slot)) in moved.iter_mut().zip(&heads) {
                if h != NONE {
                    let h = h as usize;
                    let bucket = &self.buckets[h];
                    acc ^= bucket.get(slot as usize).copied().unwrap_or(0);
                    *m = bucket.last().copied().unwrap_or(NONE);
                    acc ^= self.buckets.get(h + 1).and_then(|n| n.last()).copied().unwrap_or(0);
                }
            }
            for &m in &moved {
                if m != NONE {
                    acc ^= self.blocks[m as usize].slot;
                }
            }
        }
        std::hint::black_box(acc);
    }

    #[inline]
    fn static_plane(&self, lpn: Lpn) -> PlaneId {
        let n = self.static_planes.len() as u64;
        // A mask when the plane count is a power of two (a division otherwise).
        let i = if n.is_power_of_two() { lpn.0 & (n - 1) } else { lpn.0 % n };
        // `host_pages` is a multiple of the plane count: a mirror has its primary's `i`.
        if !self.mirror_planes.is_empty() && (self.host_pages..2 * self.host_pages).contains(&lpn.0) {
            return self.mirror_planes[i as usize];
        }
        self.static_planes[i as usize]
    }

    fn host_pages(&self) -> u64 {
        self.host_pages
    }

    fn replica(&self, lpn: Lpn) -> Option<Lpn> {
        (!self.mirror_planes.is_empty() && lpn.0 < self.host_pages).then(|| Lpn(lpn.0 + self.host_pages))
    }

    fn write(&mut self, lpn: Lpn, plane: PlaneId) -> Result<Ppa, FtlError> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        let pi = self.check_plane(plane);
        if self.aligned {
            return self.write_aligned(lpn, plane);
        }
        if !self.plane_can_write(pi) {
            self.stats.host_writes_refused += 1;
            return Err(FtlError::NoFreePage { plane });
        }
        let old = self.map_get(lpn.0);
        if old != UNMAPPED {
            self.invalidate(old);
        }
        let ppa = self.program(pi, lpn.0, false);
        self.map_set(lpn.0, ppa);
        self.stats.host_writes += 1;
        self.cmt_write(lpn.0, ppa, pi);
        Ok(Ppa(ppa as u64))
    }

    fn write_unmapped_run(&mut self, lpns: &[Lpn], out: &mut Vec<Ppa>) -> Option<usize> {
        self.unmapped_run::<true>(lpns, out)
    }

    fn write_fresh_run(&mut self, lpns: &[Lpn], out: &mut Vec<Ppa>) -> Option<usize> {
        self.unmapped_run::<false>(lpns, out)
    }

    fn trim(&mut self, lpn: Lpn) -> Option<Ppa> {
        assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
        let old = self.map_get(lpn.0);
        if old == UNMAPPED {
            return None;
        }
        self.invalidate(old);
        self.map_set(lpn.0, UNMAPPED);
        self.cmt_relocate(lpn.0, UNMAPPED);
        self.stats.trims += 1;
        Some(Ppa(old as u64))
    }

    #[inline]
    fn needs_gc(&self, plane: PlaneId) -> bool {
        let pi = self.check_plane(plane);
        self.free_count(pi) < self.cfg.gc_threshold_blocks || self.queued_writebacks(pi) > 0
    }

    fn gc_in_progress(&self, plane: PlaneId) -> bool {
        self.planes[self.check_plane(plane)].gc.is_some()
    }

    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let pi = self.check_plane(plane);
        assert!(self.planes[pi].gc.is_none(), "gc_begin on plane {} while a job is in progress", plane.0);
        if let Some(job) = self.writeback_begin(pi) {
            return Some(job);
        }
        let v = self.select_victim(pi)?;
        let m = self.blocks[v as usize];
        assert_eq!(m.state, BlockState::Closed);
        let invalid = m.written - m.valid;
        self.bucket_remove(v, invalid);
        self.blocks[v as usize].state = BlockState::Victim;
        assert!(self.gc_room(pi) >= m.valid as u64, "GC reserve violated on plane {}", plane.0);
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
        if job.victim == NONE {
            return self.writeback_step(pi);
        }
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
                if lpn >= self.cfg.logical_pages {
                    return self.move_translation_page(pi, lpn, from, job, off);
                }
                let to = self.program(pi, lpn, true);
                self.map_set(lpn, to);
                self.cmt_relocate(lpn, to);
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
                GcStep::Erase { block: BlockId(v), batch_with_next: false }
            }
        }
    }

    fn gc_finish_untimed(&mut self, plane: PlaneId, sink: &mut dyn FnMut(FlashEffect)) {
        let pi = self.check_plane(plane);
        if let Some(job) = self.planes[pi].gc
            && job.victim != NONE
            && !job.erased
            && self.cmt.is_none()
        {
            self.gc_moves_untimed(pi, job, sink);
        }
        // The erase, and every job the loop above does not cover, step by step.
        crate::api::gc_steps_untimed(self, plane, sink);
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
        let mut s = self.stats;
        if let Some(c) = &self.cmt {
            let n = c.counters;
            s.cmt_read_hits = n.read_hits;
            s.cmt_read_misses = n.read_misses;
            s.cmt_write_hits = n.write_hits;
            s.cmt_write_misses = n.write_misses;
            s.cmt_dirty_evictions = n.dirty_evictions;
        }
        s
    }

    fn write_constraint(&self, _lpn: Lpn) -> WriteConstraint {
        if self.aligned { WriteConstraint::Die } else { WriteConstraint::Any }
    }

    fn next_write_addr(&self, plane: PlaneId) -> Option<(BlockId, u32)> {
        let pi = self.check_plane(plane);
        if !self.aligned {
            if !self.plane_can_write(pi) {
                return None;
            }
            let p = &self.planes[pi];
            return Some(match p.active {
                NONE if self.cfg.config.wear_leveling => {
                    (BlockId(p.heap.peek().expect("room means a free block") as u32), 0)
                }
                NONE => (BlockId(*p.fifo.front().expect("room means a free block")), 0),
                b => (BlockId(b), self.blocks[b as usize].written),
            });
        }
        let die = pi as u32 / self.planes_per_die;
        let row = self.rows[die as usize];
        if row.page < self.ppb {
            let q = (die * self.planes_per_die + row.slot) as usize;
            return Some((BlockId(self.planes[q].active), row.page));
        }
        let plan = self.plan_row(die).ok()?;
        Some((BlockId(self.planned_block(die, plan.mask.trailing_zeros(), plan)), 0))
    }

    fn can_write(&self, plane: PlaneId) -> bool {
        let pi = self.check_plane(plane);
        if !self.aligned {
            return self.plane_can_write(pi);
        }
        let die = pi as u32 / self.planes_per_die;
        self.rows[die as usize].page < self.ppb || self.plan_row(die).is_ok()
    }

    fn write_room(&self, plane: PlaneId) -> u64 {
        let pi = self.check_plane(plane);
        if !self.aligned {
            let margin = self.room(pi).saturating_sub(self.reserve() + self.pending(pi));
            // Cached mapping: a write may also queue a write-back on its plane.
            return if self.cmt.is_some() { margin.div_ceil(2) } else { margin };
        }
        let die = pi as u32 / self.planes_per_die;
        let row = self.rows[die as usize];
        if row.page < self.ppb {
            let width = row.mask.count_ones() as u64;
            let done_this_page = (row.mask & ((1u64 << row.slot) - 1)).count_ones() as u64;
            return (self.ppb - row.page) as u64 * width - done_this_page;
        }
        self.plan_row(die).map_or(0, |plan| plan.mask.count_ones() as u64 * self.ppb as u64)
    }

    /// Exact all or nothing: the writes are performed one by one and, if one is refused,
    /// the accepted ones are undone (mapping, block and plane counters, open blocks and
    /// rows, counters), leaving the state as it was plus one refusal counted.
    fn write_group(&mut self, writes: &[(Lpn, PlaneId)], out: &mut Vec<Ppa>) -> Result<(), FtlError> {
        self.cached_group_fits(writes)?;
        let start = out.len();
        let (stats, close_seq) = (self.stats, self.close_seq);
        let mut undo = std::mem::take(&mut self.undo);
        undo.clear();
        let mut result = Ok(());
        for &(lpn, plane) in writes {
            assert!(lpn.0 < self.cfg.logical_pages, "{lpn} out of range");
            let old = self.map_get(lpn.0);
            let die = self.check_plane(plane) as u32 / self.planes_per_die;
            let row = if self.aligned { self.rows[die as usize] } else { Row { page: 0, slot: 0, mask: 0 } };
            match self.write(lpn, plane) {
                Ok(ppa) => {
                    undo.push(Undo { lpn: lpn.0, old, new: ppa.0 as u32, die, row });
                    out.push(ppa);
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        if result.is_err() {
            for &u in undo.iter().rev() {
                self.unwrite(u);
            }
            out.truncate(start);
            self.stats = FtlStats { host_writes_refused: stats.host_writes_refused + 1, ..stats };
            self.close_seq = close_seq;
        }
        self.undo = undo;
        result
    }
}

impl PageFtl {
    /// Approximate heap bytes held by the FTL's tables (the forward map's touched pages, reverse maps
    /// in use or pooled, block and plane metadata). For memory reports.
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.map.touched_bytes()
            + (self.rev_maps.len() - 1) * self.ppb as usize * 4
            + self.rev_maps.capacity() * size_of::<Box<[u32]>>()
            + self.rev_free.capacity() * 4
            + self.blocks.heap_bytes()
            + self.buckets.iter().map(|b| size_of::<Vec<u32>>() + b.capacity() * 4).sum::<usize>()
            + self.planes.iter().map(|p| p.heap.heap_bytes() + p.fifo.capacity() * 4).sum::<usize>()
            // B-tree nodes: 8-byte keys plus about as much again in node overhead.
            + self.planes.iter().map(|p| p.free_set.len() * 16).sum::<usize>()
            + self.rows.len() * size_of::<Row>()
            + self.cmt.as_ref().map_or(0, |c| c.memory_bytes())
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
                GcStep::Erase { block: BlockId(1), batch_with_next: false },
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
            ftl.planes[0].heap.push(key);
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
    fn rain1_mirrors_live_on_another_chip_for_every_striping_order() {
        for (ch, ways, dies, planes) in [(2, 2, 2, 2), (1, 3, 1, 2), (3, 1, 2, 1), (2, 1, 1, 1)] {
            let g = geo(ch, ways, dies, planes, 16, 4);
            for order in StripeOrder::all() {
                let c = FtlConfig {
                    striping_order: order,
                    replication: Replication::Rain1,
                    ..cfg(TieBreak::LowestId, true)
                };
                let ftl = PageFtl::new(g.clone(), &c).unwrap();
                let h = ftl.host_pages();
                assert!(h > 0 && h % g.total_planes() as u64 == 0 && 2 * h <= ftl.logical_pages());
                let chip = |l: u64| g.chip_of_die(g.die_of_plane(ftl.static_plane(Lpn(l))));
                let mut mirrors_per_plane = vec![0u64; g.total_planes() as usize];
                for l in 0..h {
                    let m = ftl.replica(Lpn(l)).unwrap();
                    assert_eq!(m, Lpn(l + h));
                    assert_ne!(chip(l), chip(m.0), "{order} lpn {l}: both copies on one chip");
                    // The primary stays where static allocation puts it without RAIN 1.
                    assert_eq!(ftl.static_plane(Lpn(l)), order.plane_of(&g, l));
                    mirrors_per_plane[ftl.static_plane(m).idx()] += 1;
                }
                // Mirrors spread evenly: every plane takes the same share.
                assert!(mirrors_per_plane.iter().all(|&n| n == h / g.total_planes() as u64), "{order}");
                assert_eq!(ftl.replica(Lpn(h)), None, "a mirror has no mirror");
            }
        }
        let plain = PageFtl::new(geo(2, 2, 2, 2, 16, 4), &cfg(TieBreak::LowestId, true)).unwrap();
        assert_eq!((plain.replica(Lpn(0)), plain.host_pages()), (None, plain.logical_pages()));
    }

    #[test]
    fn rain1_needs_two_chips_and_the_page_ftl() {
        let c = FtlConfig { replication: Replication::Rain1, ..cfg(TieBreak::LowestId, true) };
        let e = c.validate(&geo(1, 1, 2, 2, 16, 4)).unwrap_err();
        assert_eq!(e.key, "ftl.replication");
        assert!(e.reason.contains("two chips") && e.reason.contains("chips_per_channel"), "{e}");
        let e = FtlConfig { kind: crate::FtlKind::Nftl, ..c }.validate(&geo(2, 2, 2, 2, 16, 4)).unwrap_err();
        assert_eq!(e.key, "ftl.replication");
        assert!(e.reason.contains("only of page"), "{e}");
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
        // forward-map entries in 4 KiB pages were touched — far below the full 4 bytes × 62 M.
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

    /// GC on `plane` while it needs it, as the engine's untimed path runs it.
    fn collect(ftl: &mut PageFtl, plane: PlaneId) {
        while ftl.needs_gc(plane) && ftl.gc_begin(plane).is_some() {
            gc(ftl, plane);
        }
    }

    /// One page the full way: write to its static plane; on a refusal collect there and
    /// retry once (the caller's park-and-retry), then collect after it.
    fn write_full(ftl: &mut PageFtl, lpn: Lpn) {
        let plane = ftl.static_plane(lpn);
        if ftl.write(lpn, plane).is_err() {
            collect(ftl, plane);
            ftl.write(lpn, plane).expect("a write after GC");
        }
        collect(ftl, plane);
    }

    /// Everything a write changes that a caller can see.
    fn observable(ftl: &PageFtl) -> (Vec<Option<Ppa>>, FtlStats, Vec<(PageCounts, u32)>) {
        let map = (0..ftl.logical_pages()).map(|l| ftl.lookup(Lpn(l))).collect();
        let planes = (0..ftl.geometry.total_planes())
            .map(|p| (ftl.page_counts(PlaneId(p)), ftl.free_blocks(PlaneId(p))))
            .collect();
        (map, ftl.stats(), planes)
    }

    /// A small device (planes, blocks per plane, wear leveling) and the logical pages a
    /// run test writes, in order (reduced modulo the logical pages).
    fn run_case() -> impl proptest::strategy::Strategy<Value = (u32, u32, bool, Vec<u64>)> {
        (1u32..4, 6u32..12, proptest::bool::ANY, proptest::collection::vec(0u64..1 << 20, 1..600))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// `write_unmapped_run` (with GC after a run's last page and the full path for a
        /// page it stops before) ends in the state of writing every page the full way,
        /// through GC and rewrites, and every run stops where it must.
        #[test]
        fn unmapped_runs_write_what_single_writes_write((planes, blocks, wl, picks) in run_case()) {
            let g = geo(2, 1, 1, planes, blocks, 4);
            let c = cfg(TieBreak::LowestId, wl);
            let mut full = PageFtl::new(g.clone(), &c).unwrap();
            let mut runs = full.clone();
            let n = full.logical_pages();
            let lpns: Vec<Lpn> = picks.iter().map(|&p| Lpn(p % n)).collect();
            for &lpn in &lpns {
                write_full(&mut full, lpn);
            }
            let (mut i, mut out) = (0, Vec::new());
            while i < lpns.len() {
                out.clear();
                let k = runs.write_unmapped_run(&lpns[i..], &mut out).unwrap();
                proptest::prop_assert_eq!(k, out.len());
                let plane_of = |ppa: Ppa| g.plane_of_block(g.block_of(ppa));
                for (j, &ppa) in out.iter().enumerate() {
                    proptest::prop_assert_eq!(runs.lookup(lpns[i + j]), Some(ppa));
                    // Only the last page of a run may leave its plane needing GC (a run
                    // only takes free pages, so a plane that needed it after an earlier
                    // page would still need it now).
                    let last = *out.last().unwrap();
                    proptest::prop_assert!(plane_of(ppa) == plane_of(last) || !runs.needs_gc(plane_of(ppa)));
                }
                if let Some(&last) = out.last() {
                    collect(&mut runs, g.plane_of_block(g.block_of(last)));
                    i += k;
                } else {
                    write_full(&mut runs, lpns[i]);
                    i += 1;
                }
            }
            proptest::prop_assert!(observable(&full) == observable(&runs));
        }
    }

    /// The closed blocks of every bucket, as sorted sets (the buckets' order is free).
    fn bucket_sets(ftl: &PageFtl) -> Vec<Vec<u32>> {
        ftl.buckets
            .iter()
            .map(|b| {
                let mut v = b.clone();
                v.sort_unstable();
                v
            })
            .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 96, ..Default::default() })]

        /// Buckets built late (when a plane runs low, or a victim is asked for) give the
        /// same results as buckets kept from the start: every write, trim, victim, GC
        /// step and "can GC progress" answer, through GC, under per-plane and
        /// die-aligned allocation, and the same bucket sets once both are built.
        #[test]
        fn late_buckets_change_nothing(
            planes in 1u32..4,
            aligned in proptest::bool::ANY,
            wl in proptest::bool::ANY,
            tie in 0u8..3,
            ops in proptest::collection::vec((0u8..16, 0u64..1 << 20), 1..700),
        ) {
            let g = geo(1, 1, 1, planes, 24, 4);
            let tie = [TieBreak::LowestId, TieBreak::Oldest, TieBreak::LeastWorn][tie as usize];
            let allocation = if aligned && planes > 1 { Allocation::DieAligned } else { Allocation::PerPlane };
            let c = FtlConfig { overprovisioning: 0.3, allocation, ..cfg(tie, wl) };
            let mut lazy = PageFtl::new(g, &c).unwrap();
            let mut eager = lazy.clone();
            eager.build_buckets();
            proptest::prop_assert!(!lazy.buckets_live);
            let n = lazy.logical_pages();
            for (op, x) in ops {
                let lpn = Lpn(x % n);
                let plane = PlaneId((x % planes as u64) as u32);
                match op {
                    0..=10 => {
                        let at = lazy.static_plane(lpn);
                        let (a, b) = (lazy.write(lpn, at), eager.write(lpn, at));
                        proptest::prop_assert_eq!(a.ok(), b.ok());
                    }
                    11 => {
                        proptest::prop_assert_eq!(lazy.trim(lpn), eager.trim(lpn));
                    }
                    12 => {
                        // A victim asked for early, as the engine never does.
                        if !lazy.gc_in_progress(plane) {
                            proptest::prop_assert_eq!(lazy.gc_begin(plane), eager.gc_begin(plane));
                        }
                    }
                    _ => {
                        // The engine's way: GC while the plane needs it.
                        while !lazy.gc_in_progress(plane) && lazy.needs_gc(plane) {
                            let job = lazy.gc_begin(plane);
                            proptest::prop_assert_eq!(job, eager.gc_begin(plane));
                            if job.is_none() {
                                break;
                            }
                        }
                        while lazy.gc_in_progress(plane) {
                            proptest::prop_assert_eq!(lazy.gc_step(plane), eager.gc_step(plane));
                        }
                    }
                }
                for q in 0..planes as usize {
                    proptest::prop_assert_eq!(lazy.gc_can_progress(q), eager.gc_can_progress(q));
                }
            }
            proptest::prop_assert!(observable(&lazy) == observable(&eager));
            if !lazy.buckets_live {
                // Never ran low: the buckets are empty, and building them now matches.
                proptest::prop_assert!(lazy.buckets.iter().all(Vec::is_empty));
                lazy.build_buckets();
            }
            proptest::prop_assert_eq!(bucket_sets(&lazy), bucket_sets(&eager));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 64, ..Default::default() })]

        /// While `lookup_epoch` reads the same, every page maps where it did: through
        /// writes (refused ones too), trims, runs and GC, one step at a time. (The
        /// engine reuses admission's lookups on that promise.)
        #[test]
        fn an_unchanged_epoch_means_unchanged_lookups(
            planes in 1u32..3,
            wl in proptest::bool::ANY,
            ops in proptest::collection::vec((0u8..8, 0u64..1 << 20), 1..400),
        ) {
            let g = geo(1, 1, 1, planes, 8, 4);
            let mut ftl = PageFtl::new(g, &cfg(TieBreak::LowestId, wl)).unwrap();
            let n = ftl.logical_pages();
            let map = |f: &PageFtl| (0..n).map(|l| f.lookup(Lpn(l))).collect::<Vec<_>>();
            let (mut epoch, mut before) = (ftl.lookup_epoch(), map(&ftl));
            proptest::prop_assert!(epoch.is_some());
            let mut out = Vec::new();
            for (op, x) in ops {
                let lpn = Lpn(x % n);
                let plane = PlaneId((x % planes as u64) as u32);
                match op {
                    0..=3 => {
                        let _ = ftl.write(lpn, ftl.static_plane(lpn));
                    }
                    4 => {
                        ftl.trim(lpn);
                    }
                    5 => {
                        out.clear();
                        let _ = ftl.write_unmapped_run(&[lpn, Lpn((x + 1) % n)], &mut out);
                    }
                    6 => {
                        if !ftl.gc_in_progress(plane) {
                            ftl.gc_begin(plane);
                        }
                    }
                    _ => {
                        if ftl.gc_in_progress(plane) {
                            ftl.gc_step(plane);
                        }
                    }
                }
                let after = map(&ftl);
                if ftl.lookup_epoch() == epoch {
                    proptest::prop_assert!(after == before, "a lookup changed under an unchanged epoch");
                }
                (epoch, before) = (ftl.lookup_epoch(), after);
            }
        }

        /// On pages that are unmapped and distinct (what its callers vouch for),
        /// `write_fresh_run` stops where `write_unmapped_run` stops, returns the same pages
        /// and leaves the same state, through GC between runs.
        #[test]
        fn fresh_runs_are_unmapped_runs_on_fresh_pages((planes, blocks, wl, picks) in run_case()) {
            let g = geo(2, 1, 1, planes, blocks, 4);
            let mut checked = PageFtl::new(g.clone(), &cfg(TieBreak::LowestId, wl)).unwrap();
            let mut fresh = checked.clone();
            let n = checked.logical_pages();
            let mut seen = std::collections::BTreeSet::new();
            let lpns: Vec<Lpn> = picks.iter().map(|&p| Lpn(p % n)).filter(|l| seen.insert(l.0)).collect();
            let (mut i, mut a, mut b) = (0, Vec::new(), Vec::new());
            while i < lpns.len() {
                a.clear();
                b.clear();
                let k = checked.write_unmapped_run(&lpns[i..], &mut a).unwrap();
                proptest::prop_assert_eq!(fresh.write_fresh_run(&lpns[i..], &mut b), Some(k));
                proptest::prop_assert_eq!(&a, &b);
                if let Some(&last) = a.last() {
                    let plane = g.plane_of_block(g.block_of(last));
                    collect(&mut checked, plane);
                    collect(&mut fresh, plane);
                    i += k;
                } else {
                    // The plane refused the page: both write it the full way.
                    write_full(&mut checked, lpns[i]);
                    write_full(&mut fresh, lpns[i]);
                    i += 1;
                }
            }
            proptest::prop_assert!(observable(&checked) == observable(&fresh));
        }
    }

    #[test]
    fn unmapped_runs_stop_before_a_mapped_page_and_are_refused_where_unsupported() {
        let g = geo(1, 1, 1, 2, 8, 4);
        let mut ftl = PageFtl::new(g.clone(), &cfg(TieBreak::LowestId, false)).unwrap();
        let mut out = Vec::new();
        assert_eq!(ftl.write_unmapped_run(&[Lpn(0), Lpn(1), Lpn(0), Lpn(2)], &mut out), Some(2));
        assert_eq!(out.len(), 2);
        assert_eq!(ftl.stats().host_writes, 2);
        let mirrored =
            FtlConfig { replication: crate::config::Replication::Rain1, ..cfg(TieBreak::LowestId, false) };
        let mut ftl = PageFtl::new(geo(1, 2, 1, 2, 8, 4), &mirrored).unwrap();
        assert_eq!(ftl.write_unmapped_run(&[Lpn(0)], &mut out), None);
    }
}
