//! Superblock FTL (Kang, Jo, Kim and Lee, "A Superblock-based Flash Translation Layer
//! for NAND Flash Memory", EMSOFT 2006), the hybrid FTL of pen-partial-erase §5.3, with
//! its baseline intra- and inter-superblock GC.
//!
//! * **Mapping.** `N = ftl.superblock_size` adjacent logical blocks form a superblock
//!   (superblock `s` holds LPNs `s·N·P … (s+1)·N·P − 1`, `P` pages per block). The
//!   superblock is mapped at block granularity — to a set of at most `N + M` physical
//!   blocks of one plane, `M = ftl.superblock_extra_blocks` — and its pages at page
//!   granularity to any page of those blocks (Kang et al. keep that page map in the
//!   spare areas, cached in SRAM; we model the cache as always hitting, so lookups cost
//!   no flash reads). Superblocks are striped over the planes by `ftl.striping_order`
//!   applied to `s`.
//! * **Writes** append to the superblock's open block; when it is full the next write
//!   opens a free block of the plane, as long as the superblock holds fewer than `N + M`
//!   blocks.
//! * **Intra-superblock GC** (§5.3: "triggered when a superblock has no free pages …
//!   only the blocks with the minimum valid pages are merged"): when the open block fills
//!   and the superblock already holds `N + M` blocks, the plane refuses host writes
//!   ([`FtlError::MergeNeeded`]) until the GC ran: the block with the fewest valid pages
//!   (ties: `ftl.victim_tie_break`) is copied into a fresh block, which becomes the open
//!   block, and erased. It always gains pages: `N + M` full blocks hold at most `N·P`
//!   valid pages, so the victim has at most `N·P / (N + M) < P`.
//! * **Inter-superblock GC** (§5.3: "triggered when there is no available free block …
//!   compact the victim superblock to the fewest number of physical blocks"): when the
//!   plane's free pool falls below the GC threshold, the superblock that would give back
//!   the most blocks is compacted — every block of it that is not full of valid pages is
//!   emptied, fewest valid pages first, into fresh blocks, and erased as soon as it is
//!   empty. The spare pool covers the threshold, so some superblock always gives back a
//!   block; emptying the victims in that order needs one free block at the start only.
//! * **Reserve** as NFTL's ([`crate::nftl`]): host writes need two free blocks on the
//!   plane; they wait while a GC job runs or is due there.

use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts, WriteConstraint};
use crate::blocks::{Core, NONE, block_ftl_common};
use crate::config::{FtlConfig, FtlConfigError, FtlKind, ValidatedFtlConfig};

#[derive(Clone, Copy, Debug)]
struct Job {
    sb: u32,
    /// Index into the plane's victim list of the block being emptied.
    next_victim: usize,
    /// Page of that block to look at next.
    next_page: u32,
}

#[derive(Clone, Debug, Default)]
struct PlaneState {
    /// Superblocks placed on the plane.
    sbs: Vec<u32>,
    /// Blocks the running job empties, in order (kept to reuse its allocation).
    victims: Vec<u32>,
    job: Option<Job>,
}

/// Superblock FTL. See the [module docs](self).
#[derive(Clone, Debug)]
pub struct SuperblockFtl {
    /// The flash, the config, and per plane the superblock out of blocks and pages whose
    /// intra-superblock GC is due.
    core: Core,
    /// N: logical blocks per superblock.
    n: u32,
    /// N + M: blocks a superblock may hold.
    limit: u32,
    /// `limit + 1` slots per superblock: its blocks (a GC job holds one more for a moment).
    members: Vec<u32>,
    count: Vec<u32>,
    /// The open block each superblock appends to (`NONE`: none open).
    open: Vec<u32>,
    sb_planes: Box<[PlaneId]>,
    planes: Vec<PlaneState>,
}

impl SuperblockFtl {
    /// Build the FTL for `geometry`, validating `config` against it.
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<SuperblockFtl, FtlConfigError> {
        let cfg = FtlConfig { kind: FtlKind::Superblock, ..config.clone() }.validate(&geometry)?;
        if config.pen {
            return Err(crate::config::pen_needs_device());
        }
        let n = config.superblock_size;
        let sbs = cfg.logical_pages() / (n as u64 * geometry.pages_per_block() as u64);
        let planes_n = geometry.total_planes();
        let sb_planes: Box<[PlaneId]> =
            (0..planes_n as u64).map(|i| config.striping_order.plane_of(&geometry, i)).collect();
        let mut planes = vec![PlaneState::default(); planes_n as usize];
        for s in 0..sbs as u32 {
            planes[sb_planes[s as usize % sb_planes.len()].idx()].sbs.push(s);
        }
        let limit = n + config.superblock_extra_blocks;
        Ok(SuperblockFtl {
            core: Core::new(geometry, cfg),
            n,
            limit,
            members: vec![NONE; sbs as usize * (limit as usize + 1)],
            count: vec![0; sbs as usize],
            open: vec![NONE; sbs as usize],
            sb_planes,
            planes,
        })
    }

    /// Build the FTL for the device `spec` describes. `ftl.pen = true` is not supported
    /// by the superblock FTL yet: an error naming `ftl.pen`.
    pub fn for_device(
        spec: &lamina_nand_model::DeviceSpec,
        config: &FtlConfig,
    ) -> Result<SuperblockFtl, FtlConfigError> {
        if crate::pen::PenSettings::from_device(spec, config)?.is_some() {
            return Err(FtlConfigError {
                key: "ftl.pen",
                reason:
                    "PEN is implemented for ftl.kind = \"nftl\" only so far: use nftl or set ftl.pen = false"
                        .to_owned(),
            });
        }
        SuperblockFtl::new(spec.geometry().clone(), config)
    }

    /// The validated configuration (its logical pages are this FTL's).
    pub fn config(&self) -> &ValidatedFtlConfig {
        &self.core.cfg
    }

    /// The physical blocks superblock `sb` holds, in the order it acquired them (up to
    /// swaps when one leaves).
    pub fn blocks_of(&self, sb: u64) -> Vec<BlockId> {
        self.members(sb as u32).iter().map(|&b| BlockId(b)).collect()
    }

    fn members(&self, sb: u32) -> &[u32] {
        let at = sb as usize * (self.limit as usize + 1);
        &self.members[at..at + self.count[sb as usize] as usize]
    }

    fn add_member(&mut self, sb: u32, b: u32) {
        let c = self.count[sb as usize];
        assert!(c <= self.limit, "superblock {sb} holds more than N + M + 1 blocks");
        self.members[sb as usize * (self.limit as usize + 1) + c as usize] = b;
        self.count[sb as usize] = c + 1;
    }

    fn remove_member(&mut self, sb: u32, b: u32) {
        let at = sb as usize * (self.limit as usize + 1);
        let c = self.count[sb as usize] as usize;
        let i =
            self.members[at..at + c].iter().position(|&x| x == b).expect("block belongs to the superblock");
        self.members.swap(at + i, at + c - 1);
        self.members[at + c - 1] = NONE;
        self.count[sb as usize] -= 1;
    }

    fn sb_of(&self, lpn: u64) -> u32 {
        (lpn / (self.n as u64 * self.core.flash.ppb as u64)) as u32
    }

    fn sb_plane(&self, sb: u32) -> PlaneId {
        self.sb_planes[sb as usize % self.sb_planes.len()]
    }

    fn unit_plane(&self, lpn: u64) -> PlaneId {
        self.sb_plane(self.sb_of(lpn))
    }

    fn job_running(&self, pi: usize) -> bool {
        self.planes[pi].job.is_some()
    }

    /// A host write the gate let through: append to the superblock's open block; filling
    /// it with the superblock at N + M blocks makes its intra-superblock GC due.
    fn host_write(&mut self, lpn: u64, pi: usize) -> Ppa {
        let sb = self.sb_of(lpn);
        assert!(
            self.open[sb as usize] != NONE || self.count[sb as usize] < self.limit,
            "superblock {sb} is out of blocks but no GC is due"
        );
        let b = self.open_block(sb);
        let ppa = self.core.flash.host_program(b, lpn);
        self.close_if_full(sb, b);
        if self.open[sb as usize] == NONE && self.count[sb as usize] == self.limit {
            self.core.due[pi].push_back(sb);
        }
        ppa
    }

    fn job_step(&mut self, pi: usize) -> GcStep {
        let job = self.planes[pi].job.expect("a GC job runs");
        self.gc_step_job(pi, job)
    }

    /// The block of `sb` the next page goes to, opening a free block if none is open.
    fn open_block(&mut self, sb: u32) -> u32 {
        if self.open[sb as usize] == NONE {
            let b = self.core.flash.take_free(self.sb_plane(sb).idx());
            self.add_member(sb, b);
            self.open[sb as usize] = b;
        }
        self.open[sb as usize]
    }

    /// After programming `b` of `sb`: close it when full.
    fn close_if_full(&mut self, sb: u32, b: u32) {
        if self.core.flash.full(b) {
            self.open[sb as usize] = NONE;
        }
    }

    /// The blocks compacting `sb` would empty (every block not full of valid pages,
    /// fewest valid first) into `out`; returns the blocks that gives back and the pages
    /// it moves.
    fn compaction(&self, sb: u32, out: &mut Vec<u32>) -> (u32, u32) {
        out.clear();
        let ppb = self.core.flash.ppb;
        out.extend(
            self.members(sb).iter().copied().filter(|&b| self.core.flash.blocks[b as usize].valid < ppb),
        );
        out.sort_unstable_by_key(|&b| (self.core.flash.blocks[b as usize].valid, b));
        let valid: u32 = out.iter().map(|&b| self.core.flash.blocks[b as usize].valid).sum();
        (out.len() as u32 - valid.div_ceil(ppb), valid)
    }

    /// Inter-superblock victim: the superblock of the plane whose compaction gives back
    /// the most blocks, then moves the fewest pages (then the lowest superblock), if any
    /// gives one back. `scratch` is working space.
    fn inter_victim(&self, pi: usize, scratch: &mut Vec<u32>) -> Option<u32> {
        let mut best: Option<(u32, u32, u32)> = None;
        for &sb in &self.planes[pi].sbs {
            let (gain, moved) = self.compaction(sb, scratch);
            if gain > 0
                && best.is_none_or(|(g, m, _)| (gain, std::cmp::Reverse(moved)) > (g, std::cmp::Reverse(m)))
            {
                best = Some((gain, moved, sb));
            }
        }
        best.map(|(_, _, sb)| sb)
    }

    /// Intra-superblock victim: the block of `sb` with the fewest valid pages (ties: the
    /// configured tie-break).
    fn intra_victim(&self, sb: u32) -> u32 {
        let mut best = NONE;
        for &b in self.members(sb) {
            let v = self.core.flash.blocks[b as usize].valid;
            if best == NONE || {
                let w = self.core.flash.blocks[best as usize].valid;
                v < w || (v == w && self.core.flash.tie_beats(b, best))
            } {
                best = b;
            }
        }
        best
    }

    fn gc_step_job(&mut self, pi: usize, mut job: Job) -> GcStep {
        let Some(&v) = self.planes[pi].victims.get(job.next_victim) else {
            self.planes[pi].job = None;
            return GcStep::Done;
        };
        let first = self.core.flash.first_page(v);
        let written = self.core.flash.blocks[v as usize].written;
        let found = (job.next_page..written).find_map(|o| Some((o, self.core.flash.valid_lpn(first + o)?)));
        let step = match found {
            Some((off, lpn)) => {
                let to = self.open_block(job.sb);
                let step = self.core.flash.move_page(lpn, to);
                self.close_if_full(job.sb, to);
                job.next_page = off + 1;
                step
            }
            None => {
                self.remove_member(job.sb, v);
                job = Job { next_victim: job.next_victim + 1, next_page: 0, ..job };
                self.core.flash.erase(v)
            }
        };
        self.planes[pi].job = Some(job);
        step
    }
}

impl Ftl for SuperblockFtl {
    block_ftl_common!();

    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let pi = self.core.flash.check_plane(plane);
        assert!(self.planes[pi].job.is_none(), "gc_begin on plane {} while a job is in progress", plane.0);
        let mut victims = std::mem::take(&mut self.planes[pi].victims);
        victims.clear();
        let sb = if let Some(sb) = self.core.due[pi].pop_front() {
            victims.push(self.intra_victim(sb));
            sb
        } else {
            let Some(sb) = self.inter_victim(pi, &mut victims) else {
                self.planes[pi].victims = victims;
                return None;
            };
            self.compaction(sb, &mut victims);
            // The open block is emptied too: moves go to fresh blocks.
            self.open[sb as usize] = NONE;
            sb
        };
        assert!(self.core.flash.free_count(pi) >= 1, "plane {}: no free block for GC", plane.0);
        let blocks = victims.iter().map(|&b| self.core.flash.blocks[b as usize]);
        let (valid, written) = blocks.fold((0, 0), |(v, w), m| (v + m.valid, w + m.written - m.holes));
        let job = GcJob { victim: BlockId(victims[0]), valid_pages: valid, invalid_pages: written - valid };
        self.planes[pi].victims = victims;
        self.planes[pi].job = Some(Job { sb, next_victim: 0, next_page: 0 });
        self.core.flash.stats.gc_jobs += 1;
        Some(job)
    }

    fn has_translation_reads(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GcThreshold;

    /// One plane of 12 blocks × 4 pages; superblocks of 2 logical blocks (8 LPNs) with
    /// one extra block; OP 0.34 → 7 logical blocks → 3 superblocks (24 LPNs), 6 spare.
    fn small() -> SuperblockFtl {
        let g = crate::testing::slc_geometry(1, 1, 1, 1, 12, 4);
        let c = FtlConfig {
            kind: FtlKind::Superblock,
            overprovisioning: 0.34,
            gc_threshold: GcThreshold::FreeBlocks(2),
            superblock_size: 2,
            superblock_extra_blocks: 1,
            ..FtlConfig::default()
        };
        SuperblockFtl::new(g, &c).unwrap()
    }

    fn job(ftl: &mut SuperblockFtl) -> Vec<GcStep> {
        ftl.gc_begin(PlaneId(0)).expect("a job starts");
        let mut steps = Vec::new();
        loop {
            match ftl.gc_step(PlaneId(0)) {
                GcStep::Done => return steps,
                s => steps.push(s),
            }
        }
    }

    #[test]
    fn superblocks_are_whole_groups_of_logical_blocks() {
        let ftl = small();
        assert_eq!(ftl.logical_pages(), 24);
        let e = SuperblockFtl::new(
            ftl.geometry().clone(),
            &FtlConfig { superblock_extra_blocks: 0, ..ftl.core.cfg.config().clone() },
        )
        .unwrap_err();
        assert_eq!(e.key, "ftl.superblock_extra_blocks");
    }

    /// The logical blocks of a superblock share its physical blocks page by page: LPNs of
    /// both logical blocks interleave in one block, and a third block is shared too.
    #[test]
    fn logical_blocks_of_a_superblock_share_physical_blocks() {
        let mut ftl = small();
        let p = PlaneId(0);
        for (i, l) in [0u64, 4, 1, 5, 2, 6].into_iter().enumerate() {
            assert_eq!(ftl.write(Lpn(l), p).unwrap(), Ppa(i as u64), "LPN {l}");
        }
        assert_eq!(ftl.blocks_of(0), [BlockId(0), BlockId(1)]);
        // LPN 8 is superblock 1: its own block.
        assert_eq!(ftl.write(Lpn(8), p).unwrap(), Ppa(8));
        assert_eq!(ftl.blocks_of(1), [BlockId(2)]);
    }

    /// A superblock at N + M full blocks must collect before writes go on: the block
    /// with the fewest valid pages is copied into a fresh block, which stays open.
    #[test]
    fn a_full_superblock_collects_its_block_with_the_fewest_valid_pages() {
        let mut ftl = small();
        let p = PlaneId(0);
        // 12 writes into superblock 0 (LPNs 0..8): blocks 0, 1, 2 full.
        for l in [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 4] {
            ftl.write(Lpn(l), p).unwrap();
        }
        // Block 0 holds 0..4 of which 0, 1, 2 were rewritten: 1 valid (LPN 3).
        assert!(ftl.needs_gc(p));
        assert_eq!(ftl.write(Lpn(9), p), Err(FtlError::MergeNeeded { plane: p }));
        let steps = job(&mut ftl);
        assert_eq!(
            steps,
            [
                GcStep::Move {
                    lpn: Lpn(3),
                    from: Ppa(3),
                    to: Ppa(12),
                    copyback: false,
                    batch_with_next: false
                },
                GcStep::Erase { block: BlockId(0), batch_with_next: false },
            ]
        );
        assert_eq!(ftl.blocks_of(0), [BlockId(3), BlockId(1), BlockId(2)]);
        assert!(!ftl.needs_gc(p));
        // The fresh block stays open for the superblock's next writes.
        assert_eq!(ftl.write(Lpn(7), p).unwrap(), Ppa(13));
    }

    /// A low free pool compacts the superblock that gives back the most blocks.
    #[test]
    fn a_low_free_pool_compacts_a_superblock_to_its_fewest_blocks() {
        let mut ftl = small();
        let p = PlaneId(0);
        // Superblock 0: LPN 0 written 9 times → blocks 0, 1 full, block 2 holds one page.
        for _ in 0..9 {
            ftl.write(Lpn(0), p).unwrap();
        }
        // Superblocks 1 and 2 fill 2 blocks each with distinct LPNs: 10 blocks used.
        for l in 8..24 {
            ftl.write(Lpn(l), p).unwrap();
        }
        assert_eq!(ftl.free_blocks(p), 5);
        for _ in 0..12 {
            ftl.write(Lpn(8), p).unwrap(); // superblock 1 takes its extra block, then GCs
            if ftl.needs_gc(p) {
                job(&mut ftl);
            }
        }
        let before = ftl.free_blocks(p);
        let s0 = ftl.blocks_of(0).len();
        assert_eq!(s0, 3);
        // Force an inter-superblock compaction in the background.
        let steps = job(&mut ftl);
        let erases = steps.iter().filter(|s| matches!(s, GcStep::Erase { .. })).count();
        assert_eq!(ftl.blocks_of(0).len(), 1, "one valid page needs one block");
        assert_eq!(erases, 3);
        assert_eq!(ftl.free_blocks(p), before + 2);
    }
}
