//! NFTL: block-level mapping with data/update block pairs and merges (Ban's M-Systems
//! NFTL, the block-level FTL of pen-partial-erase §2.2 and §5, and the baseline its
//! M-Merge improves on).
//!
//! * **Mapping.** Logical block `lb = lpn / pages_per_block` owns at most two physical
//!   blocks of one plane: a **D-block** (data block) holding its pages at in-place
//!   offsets, and a **U-block** (update block) used as a log. Logical blocks are striped
//!   over the planes like LPNs of the page FTL, by `ftl.striping_order` applied to `lb`
//!   (so `WriteConstraint::Plane` of an LPN is its logical block's plane).
//! * **Writes.** A write of offset `k` goes to the D-block at its in-place offset when
//!   that page can still be programmed, else it is appended to the U-block (allocated from
//!   the plane's free pool on first need). The device programs the pages of a block
//!   strictly in order, so "can still be programmed" means `k` lies above every offset
//!   already in the D-block — the rule of NAND that forbids programming a lower page
//!   after a higher one. A D-block therefore holds its offsets in ascending order; with
//!   every offset written (a filled drive, the paper's setting) page `k` holds offset
//!   `k`, and a merge always rebuilds that layout. A logical block with gaps (offsets
//!   never written) is stored compacted: same order, no gaps (a real controller would
//!   pad the gaps; the device model has no padding program).
//! * **Merge** (the classic one, §2.2, Fig. 2): copy the latest valid copy of every
//!   offset, in offset order, into a fresh block, erase the old D-block, erase the
//!   U-block; the fresh block becomes the D-block. Triggered (a) when a U-block fills —
//!   the plane then refuses host writes with [`FtlError::MergeNeeded`] and
//!   [`Ftl::needs_gc`] holds until the pair is merged — and (b) when the plane's free
//!   pool falls below the GC threshold: the pair whose merge copies the fewest pages is
//!   merged, then the least recently updated (see `lru_victim`). Host writes to the plane wait
//!   while a merge runs ("the on-demand read/write I/O requests cannot be served by the
//!   SSD chips during the GC", §2.2).
//! * **Spare-area reads.** A read must find the newest copy of its page: the U-block is
//!   scanned from its newest page backwards, reading spare areas, until one names the
//!   page; if none does, the D-block copy is current. [`Ftl::translation_reads`] lists
//!   exactly those pages (so the engine times them); a page whose logical block has no
//!   U-block needs none. A merge reads the spare area of every written U-block page to
//!   find the latest copies; those reads are counted in
//!   [`FtlStats::merge_spare_reads`](crate::FtlStats::merge_spare_reads) (not timed:
//!   the GC protocol has no spare-read step).
//! * **Reserve.** Host writes need two free blocks on the plane (one they may take, one
//!   for the next merge's destination); a merge takes one block and frees two, so every
//!   merge finishes and gains a block. The spare pool (blocks beyond the logical blocks)
//!   is at least the GC threshold, so whenever the pool is low some logical block has a
//!   U-block to merge.

use lamina_nand_model::{BlockId, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts, WriteConstraint};
use crate::blocks::{Core, NONE, block_ftl_common};
use crate::config::{FtlConfig, FtlConfigError, FtlKind, ValidatedFtlConfig};

/// The physical blocks of one logical block.
#[derive(Clone, Copy, Debug)]
struct Pair {
    d: u32,
    u: u32,
    /// When the U-block was last written (the FTL's count of U-block writes).
    touched: u64,
}

/// What a merge does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Copying valid pages, from offset `next` on.
    Copy {
        next: u32,
    },
    EraseD,
    EraseU,
    Finish,
}

#[derive(Clone, Copy, Debug)]
struct Merge {
    lb: u32,
    old: Pair,
    /// The fresh D-block (allocated at the first copy; `NONE` if nothing was valid).
    dest: u32,
    phase: Phase,
}

#[derive(Clone, Debug, Default)]
struct PlaneState {
    /// Logical blocks of the plane that have a U-block (merge candidates).
    paired: Vec<u32>,
    job: Option<Merge>,
}

/// Block-level NFTL with D-/U-block pairs and the classic merge. See the
/// [module docs](self).
#[derive(Clone, Debug)]
pub struct NftlFtl {
    /// The flash, the config, and per plane the logical block whose full U-block makes
    /// its merge due.
    core: Core,
    pairs: Vec<Pair>,
    /// Plane of logical block `lb` = `lb_planes[lb % planes]`.
    lb_planes: Box<[PlaneId]>,
    /// Host writes into U-blocks so far (the clock of `Pair::touched`).
    u_writes: u64,
    planes: Vec<PlaneState>,
}

impl NftlFtl {
    /// Build the FTL for `geometry`, validating `config` against it (logical blocks per
    /// plane from `ftl.overprovisioning`, see `docs/ftl.md`).
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<NftlFtl, FtlConfigError> {
        let cfg = FtlConfig { kind: FtlKind::Nftl, ..config.clone() }.validate(&geometry)?;
        let logical_blocks = cfg.logical_pages() / geometry.pages_per_block() as u64;
        let lb_planes = (0..geometry.total_planes() as u64)
            .map(|i| config.striping_order.plane_of(&geometry, i))
            .collect();
        Ok(NftlFtl {
            pairs: vec![Pair { d: NONE, u: NONE, touched: 0 }; logical_blocks as usize],
            u_writes: 0,
            lb_planes,
            planes: vec![PlaneState::default(); geometry.total_planes() as usize],
            core: Core::new(geometry, cfg),
        })
    }

    /// The validated configuration (its logical pages are this FTL's).
    pub fn config(&self) -> &ValidatedFtlConfig {
        &self.core.cfg
    }

    /// The D-block and U-block of logical block `lb` (`None` where absent).
    pub fn blocks_of(&self, lb: u64) -> (Option<BlockId>, Option<BlockId>) {
        let p = self.pairs[lb as usize];
        let some = |b: u32| (b != NONE).then_some(BlockId(b));
        (some(p.d), some(p.u))
    }

    fn ppb(&self) -> u32 {
        self.core.flash.ppb
    }

    fn lb_plane(&self, lb: u32) -> PlaneId {
        self.lb_planes[lb as usize % self.lb_planes.len()]
    }

    /// The plane of `lpn`'s logical block.
    fn unit_plane(&self, lpn: u64) -> PlaneId {
        self.lb_plane((lpn / self.ppb() as u64) as u32)
    }

    fn job_running(&self, pi: usize) -> bool {
        self.planes[pi].job.is_some()
    }

    /// A host write the gate let through: program the D- or U-block; a U-block it fills
    /// makes the merge of its pair due.
    fn host_write(&mut self, lpn: u64, pi: usize) -> Ppa {
        let b = self.target(lpn);
        let ppa = self.core.flash.host_program(b, lpn);
        let lb = (lpn / self.ppb() as u64) as u32;
        if b == self.pairs[lb as usize].u {
            self.pairs[lb as usize].touched = self.u_writes;
            self.u_writes += 1;
            if self.core.flash.full(b) {
                self.core.due[pi].push_back(lb);
            }
        }
        ppa
    }

    fn job_step(&mut self, pi: usize) -> GcStep {
        let job = self.planes[pi].job.expect("a merge runs");
        self.merge_step(pi, job)
    }

    /// The block a host write of `lpn` programs, allocating a D- or U-block if needed.
    fn target(&mut self, lpn: u64) -> u32 {
        let lb = (lpn / self.ppb() as u64) as u32;
        let pair = self.pairs[lb as usize];
        let plane = self.lb_plane(lb).idx();
        if pair.d == NONE {
            let d = self.core.flash.take_free(plane);
            self.pairs[lb as usize].d = d;
            return d;
        }
        if self.in_place(pair.d, lpn) {
            return pair.d;
        }
        if pair.u == NONE {
            let u = self.core.flash.take_free(plane);
            self.pairs[lb as usize].u = u;
            self.planes[plane].paired.push(lb);
            return u;
        }
        pair.u
    }

    /// Offset `lpn` can be programmed in place in D-block `d`: the block has room and
    /// every offset already in it is lower (pages are programmed in order).
    fn in_place(&self, d: u32, lpn: u64) -> bool {
        let w = self.core.flash.blocks[d as usize].written;
        w == 0 || (w < self.ppb() && self.core.flash.spare_lpn(self.core.flash.first_page(d) + w - 1) < lpn)
    }

    /// Merge victim for a low free pool: the pair whose merge copies the fewest pages,
    /// then the least recently updated one (its U-block written longest ago). Every merge
    /// frees one block, and with dense logical blocks every merge copies a whole block,
    /// so the choice that matters is which U-block to take away: the one least likely to
    /// absorb the next updates (LRU, as log-block FTLs replace their log blocks).
    fn lru_victim(&self, pi: usize) -> Option<u32> {
        let key = |lb: u32| {
            let p = self.pairs[lb as usize];
            let (d, u) = (&self.core.flash.blocks[p.d as usize], &self.core.flash.blocks[p.u as usize]);
            (d.valid + u.valid, p.touched)
        };
        self.planes[pi].paired.iter().copied().min_by_key(|&lb| key(lb))
    }

    /// The next step of the merge in progress on plane `pi`.
    fn merge_step(&mut self, pi: usize, mut job: Merge) -> GcStep {
        let ppb = self.ppb() as u64;
        loop {
            match job.phase {
                Phase::Copy { next } => {
                    let base = job.lb as u64 * ppb;
                    let found =
                        (next..self.ppb()).find(|&k| self.core.flash.lookup(base + k as u64).is_some());
                    let Some(k) = found else {
                        job.phase = Phase::EraseD;
                        continue;
                    };
                    if job.dest == NONE {
                        job.dest = self.core.flash.take_free(pi);
                    }
                    let step = self.core.flash.move_page(base + k as u64, job.dest);
                    job.phase = Phase::Copy { next: k + 1 };
                    self.planes[pi].job = Some(job);
                    return step;
                }
                Phase::EraseD => {
                    job.phase = Phase::EraseU;
                    self.planes[pi].job = Some(job);
                    return self.core.flash.erase(job.old.d);
                }
                Phase::EraseU => {
                    job.phase = Phase::Finish;
                    self.planes[pi].job = Some(job);
                    self.pairs[job.lb as usize].u = NONE;
                    return self.core.flash.erase(job.old.u);
                }
                Phase::Finish => {
                    self.pairs[job.lb as usize] = Pair { d: job.dest, u: NONE, touched: 0 };
                    self.planes[pi].job = None;
                    return GcStep::Done;
                }
            }
        }
    }
}

impl Ftl for NftlFtl {
    block_ftl_common!();

    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let pi = self.core.flash.check_plane(plane);
        assert!(self.planes[pi].job.is_none(), "gc_begin on plane {} while a merge is in progress", plane.0);
        let lb = match self.core.due[pi].pop_front() {
            Some(lb) => lb,
            None => self.lru_victim(pi)?,
        };
        let p = &mut self.planes[pi];
        let at = p.paired.iter().position(|&x| x == lb).expect("a merge victim has a U-block");
        p.paired.swap_remove(at);
        let old = self.pairs[lb as usize];
        assert!(self.core.flash.free_count(pi) >= 1, "plane {}: no block for the merge destination", plane.0);
        let (d, u) = (self.core.flash.blocks[old.d as usize], self.core.flash.blocks[old.u as usize]);
        self.planes[pi].job = Some(Merge { lb, old, dest: NONE, phase: Phase::Copy { next: 0 } });
        self.core.flash.stats.gc_jobs += 1;
        self.core.flash.stats.merge_spare_reads += u.written as u64;
        Some(GcJob {
            victim: BlockId(old.u),
            valid_pages: d.valid + u.valid,
            invalid_pages: d.written + u.written - d.valid - u.valid,
        })
    }

    /// The U-block's pages from the newest backwards to the newest copy of `lpn`
    /// (all of them if it holds none: the D-block copy, or none, is current).
    fn translation_reads(&self, lpn: Lpn, out: &mut Vec<Ppa>) {
        let u = self.pairs[(lpn.0 / self.ppb() as u64) as usize].u;
        if u == NONE {
            return;
        }
        let first = self.core.flash.first_page(u);
        let end = first + self.core.flash.blocks[u as usize].written;
        let stop = match self.core.flash.lookup(lpn.0) {
            Some(p) if (first..end).contains(&p) => p,
            _ => first,
        };
        out.extend((stop..end).rev().map(|p| Ppa(p as u64)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GcThreshold;

    /// One plane of 8 blocks × 4 pages; 6 logical blocks (24 LPNs), 2 spare blocks.
    fn small() -> NftlFtl {
        let g = crate::testing::slc_geometry(1, 1, 1, 1, 8, 4);
        let c = FtlConfig {
            kind: FtlKind::Nftl,
            overprovisioning: 0.25,
            gc_threshold: GcThreshold::FreeBlocks(2),
            ..FtlConfig::default()
        };
        NftlFtl::new(g, &c).unwrap()
    }

    fn run_job(ftl: &mut NftlFtl) -> Vec<GcStep> {
        let mut steps = Vec::new();
        ftl.gc_begin(PlaneId(0)).expect("a merge starts");
        loop {
            match ftl.gc_step(PlaneId(0)) {
                GcStep::Done => return steps,
                s => steps.push(s),
            }
        }
    }

    #[test]
    fn capacity_is_whole_logical_blocks() {
        let ftl = small();
        assert_eq!(ftl.logical_pages(), 6 * 4);
        assert_eq!(ftl.write_constraint(Lpn(5)), WriteConstraint::Plane(PlaneId(0)));
    }

    /// A sequential fill lands in place; an overwrite goes to the U-block; the fourth
    /// overwrite fills the U-block, the plane then refuses writes until the merge ran,
    /// and the merge rebuilds the in-place layout from the newest copies.
    #[test]
    fn a_full_update_block_forces_a_merge_that_restores_in_place_offsets() {
        let mut ftl = small();
        let p = PlaneId(0);
        for l in 0..4 {
            assert_eq!(ftl.write(Lpn(l), p).unwrap(), Ppa(l)); // block 0, pages 0..4
        }
        let (d, u) = ftl.blocks_of(0);
        assert_eq!((d, u), (Some(BlockId(0)), None));
        // Overwrites of offsets 2, 1, 2, 3: the U-block (block 1) as a log.
        for (i, l) in [2, 1, 2].into_iter().enumerate() {
            assert_eq!(ftl.write(Lpn(l), p).unwrap(), Ppa(4 + i as u64));
            assert!(!ftl.needs_gc(p));
        }
        assert_eq!(ftl.write(Lpn(3), p).unwrap(), Ppa(7));
        assert!(ftl.needs_gc(p), "a full U-block makes the merge due");
        assert_eq!(ftl.write(Lpn(8), p), Err(FtlError::MergeNeeded { plane: p }));
        assert!(!ftl.can_write(p));
        let steps = run_job(&mut ftl);
        // Newest copies: 0 in D (page 0), 1 at U page 1 (5), 2 at U page 2 (6), 3 at 7.
        let moves: Vec<(u64, u64, u64)> = steps
            .iter()
            .filter_map(|s| match *s {
                GcStep::Move { lpn, from, to, .. } => Some((lpn.0, from.0, to.0)),
                _ => None,
            })
            .collect();
        assert_eq!(moves, [(0, 0, 8), (1, 5, 9), (2, 6, 10), (3, 7, 11)]);
        assert_eq!(
            steps[4..],
            [
                GcStep::Erase { block: BlockId(0), batch_with_next: false },
                GcStep::Erase { block: BlockId(1), batch_with_next: false }
            ]
        );
        assert_eq!(ftl.blocks_of(0), (Some(BlockId(2)), None));
        assert!(!ftl.needs_gc(p) && ftl.can_write(p));
        let s = ftl.stats();
        assert_eq!((s.gc_jobs, s.gc_moves, s.erases, s.merge_spare_reads), (1, 4, 2, 4));
    }

    /// The spare-area scan: newest U-block page backwards until the page's copy.
    #[test]
    fn a_lookup_scans_the_update_block_backwards_to_the_newest_copy() {
        let mut ftl = small();
        let p = PlaneId(0);
        for l in [0, 1, 2, 3, 1, 2, 1] {
            ftl.write(Lpn(l), p).unwrap();
        }
        // U-block = block 1: pages 4 (lpn 1), 5 (lpn 2), 6 (lpn 1).
        let reads = |ftl: &NftlFtl, l: u64| {
            let mut v = Vec::new();
            ftl.translation_reads(Lpn(l), &mut v);
            v.iter().map(|p| p.0).collect::<Vec<_>>()
        };
        assert_eq!(reads(&ftl, 1), [6], "the newest page is LPN 1's copy");
        assert_eq!(reads(&ftl, 2), [6, 5]);
        assert_eq!(reads(&ftl, 0), [6, 5, 4], "not in the U-block: scanned whole, D-block copy current");
        assert_eq!(reads(&ftl, 9), Vec::<u64>::new(), "no U-block, no spare read");
        assert_eq!(ftl.lookup(Lpn(1)), Some(Ppa(6)));
        assert_eq!(ftl.lookup(Lpn(0)), Some(Ppa(0)));
    }

    /// A first write at a high offset stays in place only while offsets ascend.
    #[test]
    fn out_of_order_first_writes_go_to_the_update_block() {
        let mut ftl = small();
        let p = PlaneId(0);
        assert_eq!(ftl.write(Lpn(2), p).unwrap(), Ppa(0)); // D-block page 0 holds offset 2
        assert_eq!(ftl.write(Lpn(3), p).unwrap(), Ppa(1)); // ascending: in place
        assert_eq!(ftl.write(Lpn(0), p).unwrap(), Ppa(4)); // below offset 3: the U-block
        assert_eq!(ftl.blocks_of(0), (Some(BlockId(0)), Some(BlockId(1))));
        // A background merge lays the three offsets out in order.
        let steps = run_job(&mut ftl);
        let tos: Vec<(u64, u64)> = steps
            .iter()
            .filter_map(|s| match *s {
                GcStep::Move { lpn, to, .. } => Some((lpn.0, to.0)),
                _ => None,
            })
            .collect();
        assert_eq!(tos, [(0, 8), (2, 9), (3, 10)]);
        assert!(ftl.can_write(p));
        assert_eq!(ftl.write(Lpn(1), p).unwrap(), Ppa(12), "offset 1 is below 3: a new U-block");
    }

    /// A low free pool merges the least recently updated pair (all merges here copy a
    /// whole block and free one).
    #[test]
    fn a_low_free_pool_merges_the_least_recently_updated_pair() {
        let mut ftl = small();
        let p = PlaneId(0);
        for l in 0..24 {
            ftl.write(Lpn(l), p).unwrap(); // 6 D-blocks; 2 free
        }
        ftl.write(Lpn(5), p).unwrap(); // U-block (6) for logical block 1: 1 free left
        assert!(ftl.needs_gc(p), "below the threshold of 2 free blocks");
        assert_eq!(ftl.write(Lpn(9), p), Err(FtlError::NoFreePage { plane: p }));
        let job = ftl.gc_begin(p).unwrap();
        assert_eq!((job.valid_pages, job.invalid_pages), (4, 1));
        while ftl.gc_step(p) != GcStep::Done {}
        assert_eq!(ftl.free_blocks(p), 2);
        assert_eq!(ftl.blocks_of(1), (Some(BlockId(7)), None));
        // Ten blocks, six logical: three pairs, the first updated longest ago.
        let g = crate::testing::slc_geometry(1, 1, 1, 1, 10, 4);
        let c = FtlConfig { overprovisioning: 0.4, ..ftl.config().config().clone() };
        let mut ftl = NftlFtl::new(g, &c).unwrap();
        for l in 0..24 {
            ftl.write(Lpn(l), p).unwrap();
        }
        for l in [8, 8, 12, 16] {
            ftl.write(Lpn(l), p).unwrap(); // U-blocks for logical blocks 2, 3, 4
        }
        assert!(ftl.needs_gc(p));
        assert_eq!(ftl.gc_begin(p).unwrap().victim, ftl.blocks_of(2).1.unwrap());
        while ftl.gc_step(p) != GcStep::Done {}
        assert_eq!(ftl.blocks_of(2).1, None);
        assert!(ftl.blocks_of(3).1.is_some(), "the recently updated pair keeps its U-block");
    }
}
