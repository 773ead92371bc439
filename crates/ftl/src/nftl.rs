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
//!   U-block needs none. A merge (classic or M-Merge) first reads the spare area of
//!   every written U-block page to find the latest copies: one [`GcStep::SpareRead`]
//!   each, which the engine times, counted in
//!   [`FtlStats::merge_spare_reads`](crate::FtlStats::merge_spare_reads).
//! * **Reserve.** Host writes need two free blocks on the plane (one they may take, one
//!   for the next merge's destination); a merge takes one block and frees two, so every
//!   merge finishes and gains a block. The spare pool (blocks beyond the logical blocks)
//!   is at least the GC threshold, so whenever the pool is low some logical block has a
//!   U-block to merge.

use lamina_nand_model::{BlockId, DeviceSpec, Geometry, PlaneId, Ppa};

use crate::api::{BlockInfo, Ftl, FtlError, FtlStats, GcJob, GcStep, Lpn, PageCounts, WriteConstraint};
use crate::blocks::{Core, NONE, PenState, block_ftl_common};
use crate::config::{FtlConfig, FtlConfigError, FtlKind, ValidatedFtlConfig};
use crate::pen::{LeafState, MergeChoice, MergeWhy, PageUsage, Pb, PenSettings, decide_nftl};

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

/// What an M-Merge does next (PEN, see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MPhase {
    /// Partially erase the all-invalid U-block PB at pages `first .. first + len`.
    EraseUPb {
        first: u32,
        len: u32,
    },
    /// Stage 1 of the current PB: copy its valid D-block pages out, from offset `next`.
    Out {
        next: u32,
    },
    /// Stage 2: partially erase the current PB of the D-block.
    EraseD,
    /// Stage 3: copy the PB's offsets back from the U-block, from offset `next`, into
    /// D-block page `page` on (equal to `next` unless a trim during the merge left an
    /// offset without data).
    Back {
        next: u32,
        page: u32,
    },
    /// Erase the (now empty) U-block.
    EraseU,
    Finish,
}

#[derive(Clone, Copy, Debug)]
struct MMerge {
    lb: u32,
    d: u32,
    u: u32,
    /// U-block pages `hole.0 .. hole.1` are erased (by `EraseUPb`) and take stage-1
    /// copies once the U-block's tail is full.
    hole: (u32, u32),
    /// Index of the current PB in the plane's `restore` list.
    at: usize,
    phase: MPhase,
}

#[derive(Clone, Copy, Debug)]
enum Job {
    Merge(Merge),
    MMerge(MMerge),
}

#[derive(Clone, Debug, Default)]
struct PlaneState {
    /// Logical blocks of the plane that have a U-block (merge candidates).
    paired: Vec<u32>,
    job: Option<Job>,
    /// The running M-Merge's restored PBs, in page order (kept to reuse the allocation).
    restore: Vec<Pb>,
    /// The running merge's spare-area scan: U-block pages `scan.0 .. scan.1` still to
    /// read before its first move.
    scan: (u32, u32),
}

/// PEN's per-FTL state (`ftl.pen = true`).
#[derive(Clone, Debug)]
struct Pen {
    /// Per logical block: the wear gate and the disturbance of its D-block.
    st: PenState,
    /// Scratch: the D-block's leaves, the U-block's leaves.
    d_leaves: Vec<LeafState>,
    u_leaves: Vec<PageUsage>,
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
    /// PEN's state when `ftl.pen` is on.
    pen: Option<Box<Pen>>,
}

impl NftlFtl {
    /// Build the FTL for `geometry`, validating `config` against it (logical blocks per
    /// plane from `ftl.overprovisioning`, see `docs/ftl.md`).
    ///
    /// `ftl.pen = true` is an error here (naming `ftl.pen`): PEN needs the device's
    /// partial-erase levels and latencies, so build with [`NftlFtl::for_device`].
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<NftlFtl, FtlConfigError> {
        NftlFtl::build(geometry, config, None)
    }

    /// Build the FTL for the device `spec` describes; with `ftl.pen = true` it merges by
    /// PEN's M-Merge where Algorithm 2 finds that cheaper (an error naming `ftl.pen` if
    /// the device has no partial-block erase).
    pub fn for_device(spec: &DeviceSpec, config: &FtlConfig) -> Result<NftlFtl, FtlConfigError> {
        let pen = PenSettings::from_device(spec, config)?;
        NftlFtl::build(spec.geometry().clone(), config, pen)
    }

    fn build(
        geometry: Geometry,
        config: &FtlConfig,
        pen: Option<PenSettings>,
    ) -> Result<NftlFtl, FtlConfigError> {
        let cfg = FtlConfig { kind: FtlKind::Nftl, ..config.clone() }.validate(&geometry)?;
        if config.pen && pen.is_none() {
            return Err(crate::config::pen_needs_device());
        }
        let logical_blocks = cfg.logical_pages() / geometry.pages_per_block() as u64;
        let lb_planes = (0..geometry.total_planes() as u64)
            .map(|i| config.striping_order.plane_of(&geometry, i))
            .collect();
        let pen = pen.map(|s| {
            Box::new(Pen {
                d_leaves: Vec::with_capacity(s.tree.leaf_count()),
                u_leaves: Vec::with_capacity(s.tree.leaf_count()),
                st: PenState::new(s, logical_blocks as usize, logical_blocks as usize),
            })
        });
        Ok(NftlFtl {
            pairs: vec![Pair { d: NONE, u: NONE, touched: 0 }; logical_blocks as usize],
            u_writes: 0,
            lb_planes,
            planes: vec![PlaneState::default(); geometry.total_planes() as usize],
            core: Core::new(geometry, cfg),
            pen,
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
        let (next, end) = self.planes[pi].scan;
        if let Some(p) = (next..end).find(|&p| self.core.flash.is_programmed(p)) {
            self.planes[pi].scan.0 = p + 1;
            return GcStep::SpareRead { ppa: Ppa(p as u64) };
        }
        self.planes[pi].scan = (0, 0);
        match self.planes[pi].job.expect("a merge runs") {
            Job::Merge(job) => self.merge_step(pi, job),
            Job::MMerge(job) => self.m_merge_step(pi, job),
        }
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
        self.core.flash.fits_in_place(d, lpn)
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
                    let Some(k) = self.core.flash.next_mapped(base, next) else {
                        job.phase = Phase::EraseD;
                        continue;
                    };
                    if job.dest == NONE {
                        job.dest = self.core.flash.take_free(pi);
                    }
                    let step = self.core.flash.move_page(base + k as u64, job.dest);
                    job.phase = Phase::Copy { next: k + 1 };
                    self.planes[pi].job = Some(Job::Merge(job));
                    return step;
                }
                Phase::EraseD => {
                    job.phase = Phase::EraseU;
                    self.planes[pi].job = Some(Job::Merge(job));
                    return self.core.flash.erase(job.old.d);
                }
                Phase::EraseU => {
                    job.phase = Phase::Finish;
                    self.planes[pi].job = Some(Job::Merge(job));
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
    /// PEN: Algorithm 2 for the pair `old` of logical block `lb`. Returns the M-Merge to
    /// run (its restored PBs in `planes[pi].restore`), or `None` for the baseline merge
    /// (counted by reason). The D-block must be in in-place layout (full: see the module
    /// docs) and every page of every PB to restore must have data to be restored with.
    fn plan_m_merge(&mut self, pi: usize, lb: u32, old: Pair) -> Option<MMerge> {
        let pen = self.pen.as_deref_mut()?;
        let flash = &mut self.core.flash;
        let stats_why = |flash: &mut crate::blocks::Flash, why: MergeWhy| {
            flash.stats.pen_classic_merges += 1;
            match why {
                MergeWhy::WearLimit => flash.stats.pen_wear_merges += 1,
                MergeWhy::NoSpace => flash.stats.pen_no_space_merges += 1,
                MergeWhy::NotDearer => {}
            }
        };
        if !flash.full(old.d) {
            flash.stats.pen_classic_merges += 1;
            flash.stats.pen_layout_merges += 1;
            return None;
        }
        let tree = pen.st.s.tree;
        let (ppb, lp) = (flash.ppb, tree.leaf_pages());
        let base = lb as u64 * ppb as u64;
        pen.d_leaves.clear();
        pen.d_leaves.resize(tree.leaf_count(), LeafState::default());
        for k in 0..ppb {
            let leaf = &mut pen.d_leaves[(k / lp) as usize];
            match flash.lookup(base + k as u64).map(|p| p / ppb) {
                Some(b) if b == old.d => leaf.d_valid += 1,
                Some(b) => {
                    assert_eq!(b, old.u, "logical block {lb}: a page outside its D- and U-block");
                    leaf.u_valid += 1;
                }
                None => {}
            }
        }
        for l in &mut pen.d_leaves {
            l.invalid = lp - l.d_valid;
        }
        pen.u_leaves.clear();
        pen.u_leaves.resize(tree.leaf_count(), PageUsage::default());
        let u_first = flash.first_page(old.u);
        for p in 0..flash.blocks[old.u as usize].written {
            let usage = &mut pen.u_leaves[(p / lp) as usize];
            if flash.valid_lpn(u_first + p).is_some() {
                usage.valid += 1;
            } else {
                usage.invalid += 1;
            }
        }
        let disturb = pen.st.disturb(lb as usize);
        let gate = pen.st.gates[lb as usize];
        let decision = decide_nftl(tree, &pen.st.s.costs, &pen.d_leaves, &pen.u_leaves, gate, disturb)
            .unwrap_or_else(|e| panic!("logical block {lb}: NFTL page counts the planner refuses: {e}"));
        let m = match (decision.choice, decision.m_merge) {
            (MergeChoice::MMerge, Some(m)) => m,
            (MergeChoice::Merge(why), _) => {
                stats_why(flash, why);
                return None;
            }
            (MergeChoice::MMerge, None) => unreachable!("Algorithm 2 chose an M-Merge without a plan"),
        };
        // A restored PB is refilled in page order from its first page: an offset with no
        // data (trimmed) would leave a hole and break the in-place layout.
        let restore = &mut self.planes[pi].restore;
        restore.clear();
        let mut forced = 0u64;
        for step in m.restore.sequence.iter().filter(|s| s.partial_erase) {
            let leaves = tree.leaves(step.pb).expect("a planned PB is in the tree");
            for i in leaves {
                let l = pen.d_leaves[i];
                if l.d_valid + l.u_valid < lp {
                    flash.stats.pen_classic_merges += 1;
                    flash.stats.pen_layout_merges += 1;
                    return None;
                }
                let tolerance = disturb.tolerance();
                forced += (l.invalid == 0 && l.u_valid == 0 && disturb.counts()[i] >= tolerance) as u64;
            }
            restore.push(step.pb);
        }
        let s = &mut flash.stats;
        s.pen_m_merges += 1;
        s.pen_disturb_restores += forced;
        s.pen_restore_copies += (m.restore.to_copy() + m.restore.copy_back()) as u64;
        let d_valid: u32 = pen.d_leaves.iter().map(|l| l.d_valid + l.u_valid).sum();
        s.pen_merge_copies_replaced += d_valid as u64;
        let (phase, hole) = match m.u_erase {
            Some(pb) => {
                let (first, len) = tree.pb_range(pb).expect("a planned PB is in the tree");
                (MPhase::EraseUPb { first, len }, (first, first + len))
            }
            None => (self.out_phase(pi, 0), (0, 0)),
        };
        Some(MMerge { lb, d: old.d, u: old.u, hole, at: 0, phase })
    }

    /// Stage 1 of restored PB number `at` of plane `pi`'s M-Merge, or the final U-block
    /// erase after the last one.
    fn out_phase(&self, pi: usize, at: usize) -> MPhase {
        match self.planes[pi].restore.get(at) {
            Some(&pb) => {
                let tree = self.pen.as_ref().expect("PEN is on").st.s.tree;
                MPhase::Out { next: tree.pb_range(pb).expect("a planned PB is in the tree").0 }
            }
            None => MPhase::EraseU,
        }
    }

    /// Pages `(first, len)` of restored PB number `at` of plane `pi`'s M-Merge.
    fn restore_range(&self, pi: usize, at: usize) -> (u32, u32) {
        let tree = self.pen.as_ref().expect("PEN is on").st.s.tree;
        tree.pb_range(self.planes[pi].restore[at]).expect("a planned PB is in the tree")
    }

    /// The next step of the M-Merge in progress on plane `pi` (module docs, "PEN").
    fn m_merge_step(&mut self, pi: usize, mut job: MMerge) -> GcStep {
        let ppb = self.ppb();
        let base = job.lb as u64 * ppb as u64;
        loop {
            match job.phase {
                MPhase::EraseUPb { first, len } => {
                    job.phase = self.out_phase(pi, 0);
                    self.planes[pi].job = Some(Job::MMerge(job));
                    return self.core.flash.partial_erase(job.u, first, len);
                }
                MPhase::Out { next } => {
                    let (first, len) = self.restore_range(pi, job.at);
                    let d0 = self.core.flash.first_page(job.d);
                    let found =
                        (next..first + len).find_map(|k| Some((k, self.core.flash.valid_lpn(d0 + k)?)));
                    let Some((k, lpn)) = found else {
                        job.phase = MPhase::EraseD;
                        continue;
                    };
                    let step = if self.core.flash.blocks[job.u as usize].written < ppb {
                        self.core.flash.move_page(lpn, job.u)
                    } else {
                        assert!(
                            job.hole.0 < job.hole.1,
                            "M-Merge of logical block {}: no U-block room",
                            job.lb
                        );
                        job.hole.0 += 1;
                        self.core.flash.move_page_at(lpn, job.u, job.hole.0 - 1)
                    };
                    job.phase = MPhase::Out { next: k + 1 };
                    self.planes[pi].job = Some(Job::MMerge(job));
                    return step;
                }
                MPhase::EraseD => {
                    let (first, len) = self.restore_range(pi, job.at);
                    job.phase = MPhase::Back { next: first, page: first };
                    self.planes[pi].job = Some(Job::MMerge(job));
                    return self.core.flash.partial_erase(job.d, first, len);
                }
                MPhase::Back { next, page } => {
                    let (first, len) = self.restore_range(pi, job.at);
                    let found =
                        (next..first + len).find_map(|k| Some((k, self.core.flash.lookup(base + k as u64)?)));
                    let Some((k, at)) = found else {
                        job.at += 1;
                        job.phase = self.out_phase(pi, job.at);
                        continue;
                    };
                    assert_eq!(
                        at / ppb,
                        job.u,
                        "M-Merge: offset {k} of logical block {} is not in its U-block",
                        job.lb
                    );
                    job.phase = MPhase::Back { next: k + 1, page: page + 1 };
                    self.planes[pi].job = Some(Job::MMerge(job));
                    return self.core.flash.move_page_at(base + k as u64, job.d, page);
                }
                MPhase::EraseU => {
                    job.phase = MPhase::Finish;
                    self.planes[pi].job = Some(Job::MMerge(job));
                    self.pairs[job.lb as usize].u = NONE;
                    return self.core.flash.erase(job.u);
                }
                MPhase::Finish => {
                    self.pairs[job.lb as usize] = Pair { d: job.d, u: NONE, touched: 0 };
                    let pen = &mut self.pen.as_deref_mut().expect("PEN is on").st;
                    pen.gates[job.lb as usize].record_m_merge();
                    pen.record_m_merge(job.lb as usize, &self.planes[pi].restore);
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
        let flash = &self.core.flash;
        let (valid, programmed) = (
            flash.blocks[old.d as usize].valid + flash.blocks[old.u as usize].valid,
            flash.programmed(old.d) + flash.programmed(old.u),
        );
        let u_first = flash.first_page(old.u);
        let scan = (u_first, u_first + flash.blocks[old.u as usize].written);
        let spare_reads = (scan.0..scan.1).filter(|&p| flash.is_programmed(p)).count() as u64;
        let job = GcJob { victim: BlockId(old.u), valid_pages: valid, invalid_pages: programmed - valid };
        self.core.flash.stats.gc_jobs += 1;
        self.core.flash.stats.merge_spare_reads += spare_reads;
        self.planes[pi].scan = scan;
        if let Some(m) = self.plan_m_merge(pi, lb, old) {
            self.planes[pi].job = Some(Job::MMerge(m));
            return Some(job);
        }
        if let Some(pen) = self.pen.as_deref_mut() {
            // A baseline merge gives the logical block a fresh D-block.
            pen.st.gates[lb as usize].record_merge();
            pen.st.reset(lb as usize);
        }
        assert!(self.core.flash.free_count(pi) >= 1, "plane {}: no block for the merge destination", plane.0);
        self.planes[pi].job = Some(Job::Merge(Merge { lb, old, dest: NONE, phase: Phase::Copy { next: 0 } }));
        Some(job)
    }

    /// The U-block's programmed pages from the newest backwards to the newest copy of
    /// `lpn` (all of them if it holds none: the D-block copy, or none, is current).
    /// Pages an M-Merge's partial erase left erased are skipped.
    fn translation_reads(&self, lpn: Lpn, out: &mut Vec<Ppa>) {
        let u = self.pairs[(lpn.0 / self.ppb() as u64) as usize].u;
        if u == NONE {
            return;
        }
        let flash = &self.core.flash;
        let first = flash.first_page(u);
        let end = first + flash.blocks[u as usize].written;
        let stop = match flash.lookup(lpn.0) {
            Some(p) if (first..end).contains(&p) => p,
            _ => first,
        };
        out.extend((stop..end).rev().filter(|&p| flash.is_programmed(p)).map(|p| Ppa(p as u64)));
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
        // First the spare areas of the U-block's four written pages, in page order.
        let spare: Vec<GcStep> = (4..8).map(|p| GcStep::SpareRead { ppa: Ppa(p) }).collect();
        assert_eq!(steps[..4], spare);
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
            steps[8..],
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
