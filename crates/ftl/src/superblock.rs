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
use crate::blocks::{Core, NONE, PenState, block_ftl_common};
use crate::config::{FtlConfig, FtlConfigError, FtlKind, ValidatedFtlConfig};
use crate::pen::{DisturbState, MergeChoice, MergeWhy, PageUsage, Pb, PenError, PenSettings, SuperblockRule};

#[derive(Clone, Copy, Debug)]
struct Job {
    sb: u32,
    /// Index into the plane's victim list of the block being emptied.
    next_victim: usize,
    /// Page of that block to look at next.
    next_page: u32,
}

/// What an M-Merge (Algorithm 3) does next; restore `at` is `restores[at]` of the plane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MPhase {
    /// Before stage 1 of restore `at`: make room in the staging block.
    Prepare,
    /// Stage 1: copy the PB's valid pages to the staging block, from PB page `next`.
    Out {
        next: u32,
    },
    /// Stage 2: partially erase the PB.
    EraseD,
    /// Stage 3: copy the PB's pages back from staging page `next` on.
    Back {
        next: u32,
    },
    /// The U-blkset's valid pages into the D-blkset's erased pages: U-blkset block
    /// `u`, from page `next`; destinations from D-blkset block `d`, page `page` on.
    Fill {
        u: usize,
        next: u32,
        d: usize,
        page: u32,
    },
    /// Erase U-blkset block `u`.
    EraseU {
        u: usize,
    },
    /// Erase the staging block.
    EraseStage,
    Finish,
}

#[derive(Clone, Copy, Debug)]
struct MJob {
    sb: u32,
    /// Index into the plane's `restores`.
    at: usize,
    /// The staging block of stage-1 copies (`NONE` until taken).
    stage: u32,
    /// Its first page holding the current restore's stage-1 copies.
    stage_from: u32,
    /// Staging blocks taken so far (Algorithm 3 priced `PlaneState::staging_planned`).
    staged: u64,
    phase: MPhase,
}

#[derive(Clone, Copy, Debug)]
enum SbJob {
    Gc(Job),
    MMerge(MJob),
}

#[derive(Clone, Debug, Default)]
struct PlaneState {
    /// Superblocks placed on the plane.
    sbs: Vec<u32>,
    /// Blocks the running job empties, in order (kept to reuse its allocation); for an
    /// M-Merge, the U-blkset.
    victims: Vec<u32>,
    /// The running M-Merge's D-blkset and its restored PBs `(block, pb)`, in order.
    d_blocks: Vec<u32>,
    restores: Vec<(u32, Pb)>,
    /// Staging blocks Algorithm 3 priced for the running M-Merge (checked at its end).
    staging_planned: u64,
    job: Option<SbJob>,
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
    /// PEN's state when `ftl.pen` is on: a wear gate per superblock, a disturbance state
    /// per physical block (since it joined its superblock).
    pen: Option<Box<PenState>>,
}

impl SuperblockFtl {
    /// Build the FTL for `geometry`, validating `config` against it.
    ///
    /// `ftl.pen = true` is an error here (naming `ftl.pen`): build with
    /// [`SuperblockFtl::for_device`].
    pub fn new(geometry: Geometry, config: &FtlConfig) -> Result<SuperblockFtl, FtlConfigError> {
        SuperblockFtl::build(geometry, config, None)
    }

    fn build(
        geometry: Geometry,
        config: &FtlConfig,
        pen: Option<PenSettings>,
    ) -> Result<SuperblockFtl, FtlConfigError> {
        let cfg = FtlConfig { kind: FtlKind::Superblock, ..config.clone() }.validate(&geometry)?;
        if config.pen && pen.is_none() {
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
        let pen = pen.map(|s| Box::new(PenState::new(s, sbs as usize, geometry.total_blocks() as usize)));
        Ok(SuperblockFtl {
            pen,
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

    /// Build the FTL for the device `spec` describes; with `ftl.pen = true` its merges
    /// (intra- and inter-superblock GC) run Algorithm 3's M-Merge where that is cheaper
    /// (an error naming `ftl.pen` if the device has no partial-block erase).
    pub fn for_device(
        spec: &lamina_nand_model::DeviceSpec,
        config: &FtlConfig,
    ) -> Result<SuperblockFtl, FtlConfigError> {
        let pen = PenSettings::from_device(spec, config)?;
        SuperblockFtl::build(spec.geometry().clone(), config, pen)
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
        match self.planes[pi].job.expect("a GC job runs") {
            SbJob::Gc(job) => self.gc_step_job(pi, job),
            SbJob::MMerge(job) => self.m_merge_step(pi, job),
        }
    }

    /// The block of `sb` the next page goes to, opening a free block if none is open.
    fn open_block(&mut self, sb: u32) -> u32 {
        if self.open[sb as usize] == NONE {
            let b = self.core.flash.take_free(self.sb_plane(sb).idx());
            if let Some(pen) = self.pen.as_deref_mut() {
                pen.reset(b as usize);
            }
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
        self.planes[pi].job = Some(SbJob::Gc(job));
        step
    }

    /// PEN: Algorithm 3 for superblock `sb`, whose intra-superblock GC is due when
    /// `intra` (else its compaction). Starts the M-Merge and returns its job summary, or
    /// returns `None` for the baseline GC (counted by reason; the superblock's wear gate
    /// restarts). Uses the plane's `victims` (the U-blkset), `d_blocks` and `restores`.
    fn plan_m_merge(&mut self, pi: usize, sb: u32, intra: bool) -> Option<GcJob> {
        let pen = self.pen.as_deref_mut().expect("PEN is on");
        let flash = &mut self.core.flash;
        let tree = pen.s.tree;
        let (ppb, lp) = (flash.ppb, tree.leaf_pages());
        let at = sb as usize * (self.limit as usize + 1);
        let members = &self.members[at..at + self.count[sb as usize] as usize];
        let usage: Vec<Vec<PageUsage>> = members
            .iter()
            .map(|&b| {
                let mut leaves = vec![PageUsage::default(); tree.leaf_count()];
                let first = flash.first_page(b);
                for p in 0..flash.blocks[b as usize].written {
                    if flash.is_programmed(first + p) {
                        let l = &mut leaves[(p / lp) as usize];
                        if flash.valid_lpn(first + p).is_some() {
                            l.valid += 1;
                        } else {
                            l.invalid += 1;
                        }
                    }
                }
                leaves
            })
            .collect();
        let states: Option<Vec<DisturbState>> = pen
            .s
            .disturb_tolerance
            .map(|_| members.iter().map(|&b| pen.disturb(b as usize).clone()).collect());
        let gate = pen.gates[sb as usize];
        let mut decided =
            crate::pen::decide_superblock(tree, &pen.s.costs, &usage, self.n, gate, states.as_deref());
        if let Ok(d) = &mut decided {
            let priced = matches!(d.choice, MergeChoice::MMerge | MergeChoice::Merge(MergeWhy::NotDearer));
            if priced && pen.s.superblock_rule == SuperblockRule::PerFreedPage {
                d.choice = if crate::pen::m_merge_frees_cheaper(tree, &pen.s.costs, &usage, d, intra) {
                    MergeChoice::MMerge
                } else {
                    MergeChoice::Merge(MergeWhy::NotDearer)
                };
            }
        }
        let d = match decided {
            Ok(d) if d.choice == MergeChoice::MMerge => d,
            other => {
                let s = &mut flash.stats;
                s.pen_classic_merges += 1;
                match other {
                    Ok(d) if d.choice == MergeChoice::Merge(MergeWhy::WearLimit) => s.pen_wear_merges += 1,
                    Ok(d) if d.choice == MergeChoice::Merge(MergeWhy::NoSpace) => s.pen_no_space_merges += 1,
                    Ok(_) => {}
                    // No block beyond the N logical ones: M-Merge cannot give one back.
                    Err(PenError::NothingToErase { .. }) => s.pen_no_space_merges += 1,
                    Err(e) => panic!("superblock {sb}: page counts the planner refuses: {e}"),
                }
                pen.gates[sb as usize].record_merge();
                return None;
            }
        };
        let plane = &mut self.planes[pi];
        plane.victims.clear();
        plane.victims.extend(d.u_blkset.iter().map(|&i| members[i]));
        plane.d_blocks.clear();
        plane.restores.clear();
        plane.staging_planned = d.staging_erases;
        let mut forced = 0u64;
        let mut copies = d.moved_from_u;
        for (i, plan) in &d.d_plans {
            let b = members[*i];
            plane.d_blocks.push(b);
            copies += (plan.to_copy() + plan.copy_back()) as u64;
            for pb in plan.restored() {
                plane.restores.push((b, pb));
                if let Some(states) = &states {
                    for l in tree.leaves(pb).expect("a planned PB is in the tree") {
                        let u = usage[*i][l];
                        forced += (u.invalid == 0
                            && u.valid > 0
                            && states[*i].counts()[l] >= states[*i].tolerance())
                            as u64;
                    }
                }
            }
        }
        let replaced: u64 = usage
            .iter()
            .map(|b| b.iter().map(|l| l.valid as u64).sum::<u64>())
            .filter(|&v| v < ppb as u64)
            .sum();
        let s = &mut flash.stats;
        s.gc_jobs += 1;
        s.pen_m_merges += 1;
        s.pen_restore_copies += copies;
        s.pen_merge_copies_replaced += replaced;
        s.pen_disturb_restores += forced;
        let (valid, programmed) = members
            .iter()
            .fold((0, 0), |(v, w), &b| (v + flash.blocks[b as usize].valid, w + flash.programmed(b)));
        let victim = BlockId(plane.victims[0]);
        self.open[sb as usize] = NONE;
        let phase = if plane.restores.is_empty() {
            MPhase::Fill { u: 0, next: 0, d: 0, page: 0 }
        } else {
            MPhase::Prepare
        };
        plane.job = Some(SbJob::MMerge(MJob { sb, at: 0, stage: NONE, stage_from: 0, staged: 0, phase }));
        Some(GcJob { victim, valid_pages: valid, invalid_pages: programmed - valid })
    }

    /// `(block, first page, pages)` of restore `at` of plane `pi`'s M-Merge.
    fn restore_at(&self, pi: usize, at: usize) -> (u32, u32, u32) {
        let (b, pb) = self.planes[pi].restores[at];
        let tree = self.pen.as_ref().expect("PEN is on").s.tree;
        let (first, len) = tree.pb_range(pb).expect("a planned PB is in the tree");
        (b, first, len)
    }

    /// The next step of the M-Merge in progress on plane `pi` (docs/ftl.md, "PEN").
    fn m_merge_step(&mut self, pi: usize, mut job: MJob) -> GcStep {
        let ppb = self.core.flash.ppb;
        loop {
            match job.phase {
                MPhase::Prepare => {
                    let (b, first, len) = self.restore_at(pi, job.at);
                    let f = &self.core.flash;
                    let b0 = f.first_page(b);
                    let need = (first..first + len).filter(|&p| f.valid_lpn(b0 + p).is_some()).count() as u32;
                    if job.stage != NONE && f.blocks[job.stage as usize].written + need > ppb {
                        // Full of stale copies: erase it (it returns to the pool) and
                        // prepare again with a fresh one.
                        let stage = job.stage;
                        job.stage = NONE;
                        self.planes[pi].job = Some(SbJob::MMerge(job));
                        return self.core.flash.erase(stage);
                    }
                    job.phase = MPhase::Out { next: first };
                    if need > 0 && job.stage == NONE {
                        job.stage = self.core.flash.take_free(pi);
                        job.staged += 1;
                    }
                    if job.stage != NONE {
                        job.stage_from = self.core.flash.blocks[job.stage as usize].written;
                    }
                }
                MPhase::Out { next } => {
                    let (b, first, len) = self.restore_at(pi, job.at);
                    let b0 = self.core.flash.first_page(b);
                    let found =
                        (next..first + len).find_map(|p| Some((p, self.core.flash.valid_lpn(b0 + p)?)));
                    let Some((p, lpn)) = found else {
                        job.phase = MPhase::EraseD;
                        continue;
                    };
                    job.phase = MPhase::Out { next: p + 1 };
                    self.planes[pi].job = Some(SbJob::MMerge(job));
                    return self.core.flash.move_page(lpn, job.stage);
                }
                MPhase::EraseD => {
                    let (b, first, len) = self.restore_at(pi, job.at);
                    job.phase = MPhase::Back { next: job.stage_from };
                    self.planes[pi].job = Some(SbJob::MMerge(job));
                    return self.core.flash.partial_erase(b, first, len);
                }
                MPhase::Back { next } => {
                    let (b, first, _) = self.restore_at(pi, job.at);
                    let f = &self.core.flash;
                    let end = if job.stage == NONE { 0 } else { f.blocks[job.stage as usize].written };
                    let s0 = if job.stage == NONE { 0 } else { f.first_page(job.stage) };
                    let found = (next..end).find_map(|p| Some((p, f.valid_lpn(s0 + p)?)));
                    let Some((p, lpn)) = found else {
                        job.at += 1;
                        job.phase = if job.at < self.planes[pi].restores.len() {
                            MPhase::Prepare
                        } else {
                            MPhase::Fill { u: 0, next: 0, d: 0, page: 0 }
                        };
                        continue;
                    };
                    // Refill the PB from its first page, in order: after its earlier copies.
                    let b0 = f.first_page(b);
                    let page = (first..ppb).find(|&q| !f.is_programmed(b0 + q)).expect("the PB has room");
                    job.phase = MPhase::Back { next: p + 1 };
                    self.planes[pi].job = Some(SbJob::MMerge(job));
                    return self.core.flash.move_page_at(lpn, b, page);
                }
                MPhase::Fill { u, next, d, page } => {
                    let Some(&ub) = self.planes[pi].victims.get(u) else {
                        job.phase = MPhase::EraseU { u: 0 };
                        continue;
                    };
                    let f = &self.core.flash;
                    let u0 = f.first_page(ub);
                    let found =
                        (next..f.blocks[ub as usize].written).find_map(|p| Some((p, f.valid_lpn(u0 + p)?)));
                    let Some((p, lpn)) = found else {
                        job.phase = MPhase::Fill { u: u + 1, next: 0, d, page };
                        continue;
                    };
                    // The lowest erased D-blkset page from the cursor on: erased runs are
                    // filled from their first page, in order.
                    let (mut d, mut page) = (d, page);
                    loop {
                        let db = *self.planes[pi].d_blocks.get(d).expect("Algorithm 3 checked the room");
                        let d0 = f.first_page(db);
                        if let Some(q) = (page..ppb).find(|&q| !f.is_programmed(d0 + q)) {
                            page = q;
                            break;
                        }
                        (d, page) = (d + 1, 0);
                    }
                    let db = self.planes[pi].d_blocks[d];
                    job.phase = MPhase::Fill { u, next: p + 1, d, page: page + 1 };
                    self.planes[pi].job = Some(SbJob::MMerge(job));
                    return self.core.flash.move_page_at(lpn, db, page);
                }
                MPhase::EraseU { u } => {
                    let Some(&ub) = self.planes[pi].victims.get(u) else {
                        job.phase = MPhase::EraseStage;
                        continue;
                    };
                    job.phase = MPhase::EraseU { u: u + 1 };
                    self.planes[pi].job = Some(SbJob::MMerge(job));
                    self.remove_member(job.sb, ub);
                    return self.core.flash.erase(ub);
                }
                MPhase::EraseStage => {
                    job.phase = MPhase::Finish;
                    if job.stage == NONE {
                        continue;
                    }
                    let stage = job.stage;
                    job.stage = NONE;
                    self.planes[pi].job = Some(SbJob::MMerge(job));
                    return self.core.flash.erase(stage);
                }
                MPhase::Finish => {
                    // Equal unless a trim during the job emptied a restore (fewer then).
                    assert!(
                        job.staged <= self.planes[pi].staging_planned,
                        "superblock {}: the M-Merge took {} staging blocks, Algorithm 3 priced {}",
                        job.sb,
                        job.staged,
                        self.planes[pi].staging_planned
                    );
                    let pen = self.pen.as_deref_mut().expect("PEN is on");
                    pen.gates[job.sb as usize].record_m_merge();
                    let plane = &self.planes[pi];
                    for &b in &plane.d_blocks {
                        let restored: Vec<Pb> =
                            plane.restores.iter().filter(|r| r.0 == b).map(|r| r.1).collect();
                        if !restored.is_empty() {
                            pen.record_m_merge(b as usize, &restored);
                        }
                    }
                    self.planes[pi].job = None;
                    return GcStep::Done;
                }
            }
        }
    }
}

impl Ftl for SuperblockFtl {
    block_ftl_common!();

    fn gc_begin(&mut self, plane: PlaneId) -> Option<GcJob> {
        let pi = self.core.flash.check_plane(plane);
        assert!(self.planes[pi].job.is_none(), "gc_begin on plane {} while a job is in progress", plane.0);
        let mut victims = std::mem::take(&mut self.planes[pi].victims);
        victims.clear();
        let due = self.core.due[pi].pop_front();
        let sb = match due {
            Some(sb) => sb,
            None => {
                let Some(sb) = self.inter_victim(pi, &mut victims) else {
                    self.planes[pi].victims = victims;
                    return None;
                };
                sb
            }
        };
        assert!(self.core.flash.free_count(pi) >= 1, "plane {}: no free block for GC", plane.0);
        if self.pen.is_some() {
            self.planes[pi].victims = victims;
            if let Some(job) = self.plan_m_merge(pi, sb, due.is_some()) {
                return Some(job);
            }
            victims = std::mem::take(&mut self.planes[pi].victims);
            victims.clear();
        }
        let sb = if due.is_some() {
            victims.push(self.intra_victim(sb));
            sb
        } else {
            self.compaction(sb, &mut victims);
            // The open block is emptied too: moves go to fresh blocks.
            self.open[sb as usize] = NONE;
            sb
        };
        let blocks = victims.iter().map(|&b| self.core.flash.blocks[b as usize]);
        let (valid, written) = blocks.fold((0, 0), |(v, w), m| (v + m.valid, w + m.written - m.holes));
        let job = GcJob { victim: BlockId(victims[0]), valid_pages: valid, invalid_pages: written - valid };
        self.planes[pi].victims = victims;
        self.planes[pi].job = Some(SbJob::Gc(Job { sb, next_victim: 0, next_page: 0 }));
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
